import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { type CodeBlock, codeBlocks } from '../../docs/generate/markdown.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The runnable examples of the docs run: a ```ts block tagged `run` (```` ```ts run ````) is
 * written, with the page's files (blocks whose first line names one, `// jobs/send-email.ts`),
 * into an app folder of its own and run by Node against a fresh database, and must exit 0. The
 * free names an example may use (`sluice`, `users`, …) are made real by test/fixtures/docsRunPrelude.ts. Every
 * block is also type-checked by examples.test.ts; this is for the ones whose claim is what they do.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const APPS = join(ROOT, '.scratch', 'docs-run');
const PRELUDE = pathToFileURL(join(ROOT, 'test', 'fixtures', 'docsRunPrelude.ts')).href;
const REGISTER_TSX = pathToFileURL(join(ROOT, 'test', 'helpers', 'registerTsx.mjs')).href;

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];
const isTs = (block: CodeBlock) => block.lang === 'ts' || block.lang === 'typescript';
const fileOf = (block: CodeBlock) => /^\/\/ ([\w./-]+\.ts)\b/.exec(block.code)?.[1];

interface Runnable {
  readonly at: string;
  readonly app: string;
  readonly file: string;
}

/** Writes each page that has runnable blocks as an app folder; returns the blocks to run. */
function writeApps(): Runnable[] {
  rmSync(APPS, { recursive: true, force: true });
  return PAGES.flatMap((page) => {
    const blocks = codeBlocks(readFileSync(page, 'utf8')).filter(isTs);
    const runnable = blocks.filter((b) => b.tags.includes('run'));
    if (runnable.length === 0) return [];
    const app = join(APPS, relative(ROOT, page).replace(/[/.]/g, '_'));
    for (const block of blocks) {
      const file = fileOf(block);
      if (file === undefined) continue;
      mkdirSync(dirname(join(app, file)), { recursive: true });
      writeFileSync(join(app, file), block.code);
    }
    return runnable.map((block) => {
      const file = fileOf(block) ?? `line-${block.line}.ts`;
      mkdirSync(dirname(join(app, file)), { recursive: true });
      // The install the prelude opened is closed after the example (a closed one closes again at once).
      writeFileSync(join(app, file), `${block.code}\nawait (globalThis as any).__docsSluice.close();\n`);
      return { at: `${relative(ROOT, page)}:${block.line}`, app, file };
    });
  });
}

describe('the runnable examples in the docs', () => {
  const db = useTestDatabase('docs_run');

  it('run against a fresh database and exit 0', () => {
    const runnable = writeApps();
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    const failed: string[] = [];
    for (const { at, app, file } of runnable) {
      const run = spawnSync(
        process.execPath,
        ['--conditions=sluice-source', '--import', REGISTER_TSX, '--import', PRELUDE, join(app, file)],
        { cwd: app, env: { ...process.env, MYSQL_URL: db.url, LOG_LEVEL: 'error' }, encoding: 'utf8', timeout: 60_000 },
      );
      if (run.status !== 0)
        failed.push(
          `${at}: exit ${run.status ?? run.signal}: ${run.stderr.trim().split('\n').slice(0, 5).join(' | ')}`,
        );
    }
    expect(failed).toEqual([]);
  }, 300_000);
});
