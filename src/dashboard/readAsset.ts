import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The files a page loads, all shipped with the package (no CDN, works offline): the dashboard's
 * own CSS and script beside this file (copied into dist/ by `npm run build`), and uPlot's
 * build resolved from node_modules (a dependency). Read once, then served from memory.
 */
const require = createRequire(import.meta.url);
const own = (file: string) => fileURLToPath(new URL(`./assets/${file}`, import.meta.url));

const FILES: Record<string, { path: () => string; type: string }> = {
  'dashboard.css': { path: () => own('dashboard.css'), type: 'text/css; charset=utf-8' },
  'dashboard.js': { path: () => own('dashboard.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { path: () => require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
  'uPlot.iife.min.js': {
    path: () => require.resolve('uplot/dist/uPlot.iife.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

const loaded = new Map<string, Promise<Buffer>>();

/** The asset named `file`, or null when there is none by that name. */
export async function readAsset(file: string): Promise<{ body: Buffer; type: string } | null> {
  const entry = Object.hasOwn(FILES, file) ? FILES[file] : undefined;
  if (!entry) return null;
  let body = loaded.get(file);
  if (!body) {
    body = readFile(entry.path());
    loaded.set(file, body);
    body.catch(() => loaded.delete(file));
  }
  return { body: await body, type: entry.type };
}
