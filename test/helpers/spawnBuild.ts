import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's transpiled sources, which spawned `sluice` processes run (spawnBuild.ts). */
    spawnBuild: string;
  }
}

/**
 * The sources the suite's child processes run, transpiled once per run to plain ESM JavaScript.
 *
 * Every `sluice` process a test spawns would otherwise load the TypeScript sources through tsx:
 * measured here, about 0.9 s more CPU per process start (the loader hooks and a transform per
 * module) than the same modules as JavaScript, and the suite starts ~300 processes on two cores.
 * So globalSetup transpiles src/, migrations/ and test/fixtures/ (no type check: that is `npm run
 * typecheck`) into node_modules/.cache/, in the repo's layout, so that every path the code derives
 * from import.meta.url holds: the migrations beside src, the dashboard's assets, the demo's jobs.
 * Relative `.ts` specifiers become `.js`, and a job file's `import … from 'sluice'` points at the
 * transpiled src/index.js: the same modules the command runs, as the sluice-source condition does
 * under tsx. A child whose job files are not in the build (a test's own folder of .ts files) runs
 * from the sources with tsx, as before (cliArgs in sourceCli.ts).
 */

/** Transpiled, under the build: the folders of the repo whose .ts files the children load. */
const FOLDERS = ['src', 'migrations', 'test/fixtures'];

/** Copied as they are: files a transpiled module reads at run time. */
const ASSETS = ['src/dashboard/assets'];

/**
 * For a globalSetup: builds the sources for this run's child processes, provides the folder, and
 * returns its removal. In watch mode the build is made again before every rerun, so that children
 * run the sources as they are now, not as they were when the run started.
 */
export async function provideSpawnBuild(project: TestProject): Promise<() => void> {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const build = await buildForSpawn(root);
  project.provide('spawnBuild', build.dir);
  project.onTestsRerun(async () => {
    await buildForSpawn(root);
  });
  return build.remove;
}

/** Transpiles the sources for child processes into a fresh folder; returns it, and how to remove it. */
async function buildForSpawn(root: string): Promise<{ dir: string; remove: () => void }> {
  const parent = join(root, 'node_modules', '.cache', 'sluice-spawn');
  const dir = join(parent, String(process.pid));
  rmSync(dir, { recursive: true, force: true });
  removeOrphans(parent);
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const tsconfigRaw = readFileSync(join(root, 'tsconfig.json'), 'utf8');
  const files = FOLDERS.flatMap((folder) => tsFiles(root, folder));
  await Promise.all(
    files.map(async (file) => {
      const source = readFileSync(join(root, file), 'utf8');
      const { code } = await transform(source, {
        loader: 'ts',
        format: 'esm',
        target: 'node20',
        sourcefile: join(root, file),
        tsconfigRaw,
      });
      const out = join(dir, file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, rewriteSpecifiers(code, relative(dirname(out), join(dir, 'src', 'index.js'))));
    }),
  );
  for (const asset of ASSETS) cpSync(join(root, asset), join(dir, asset), { recursive: true });
  // The build's own package scope: ESM, and the name packageVersion() looks for.
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'sluice', version, type: 'module', private: true }));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Builds of runs that ended without their teardown (killed): their process is gone. */
function removeOrphans(parent: string): void {
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The .ts files under `folder` (relative to root), declarations and tests left out. */
function tsFiles(root: string, folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.d.ts')) continue;
    if (entry.name.endsWith('.test.ts')) continue;
    found.push(relative(root, join(entry.parentPath, entry.name)));
  }
  return found;
}

/** Static and dynamic import specifiers, and `export … from`. */
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"\n]+)\2/g;

function rewriteSpecifiers(code: string, toIndex: string): string {
  const index = toIndex.split(sep).join('/');
  return code.replace(SPECIFIER, (whole, lead: string, quote: string, spec: string) => {
    if (spec === 'sluice') return `${lead}${quote}${index.startsWith('.') ? index : `./${index}`}${quote}`;
    if (spec.startsWith('.') && spec.endsWith('.ts')) return `${lead}${quote}${spec.slice(0, -3)}.js${quote}`;
    return whole;
  });
}
