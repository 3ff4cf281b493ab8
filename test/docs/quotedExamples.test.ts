import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeBlocks } from '../../docs/generate/markdown.ts';

/**
 * Examples the docs quote from the suite: a ```ts block whose first line is a comment naming a test
 * file (`// test/testing/examples/performJob.test.ts`) is that file's text from that comment to its
 * end, so the example runs as written whenever the suite runs. Every file of QUOTED_DIRS must be
 * quoted somewhere, so a page cannot drop an example that its folder still runs.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const QUOTED_DIRS = ['test/testing/examples'];

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];

interface Quote {
  readonly at: string;
  readonly file: string;
  readonly code: string;
}

const quotes: Quote[] = PAGES.flatMap((page) =>
  codeBlocks(readFileSync(page, 'utf8')).flatMap((block) => {
    const named = /^\/\/ (test\/[\w./-]+\.test\.ts)\n/.exec(block.code);
    return (block.lang === 'ts' || block.lang === 'typescript') && named
      ? [{ at: `${relative(ROOT, page)}:${block.line}`, file: named[1] as string, code: block.code }]
      : [];
  }),
);

describe('examples the docs quote from the suite', () => {
  it('are there', () => {
    expect(quotes.length).toBeGreaterThanOrEqual(3);
  });

  it('are their test file, from the comment that names it to the end', () => {
    const stale = quotes.flatMap(({ at, file, code }) => {
      const path = join(ROOT, file);
      if (!existsSync(path)) return [`${at}: no file ${file}`];
      const text = readFileSync(path, 'utf8');
      const from = text.indexOf(`// ${file}\n`);
      if (from < 0) return [`${at}: ${file} has no line "// ${file}"`];
      return text.slice(from).trimEnd() === code.trimEnd() ? [] : [`${at}: differs from ${file}`];
    });
    expect(stale).toEqual([]);
  });

  it('cover every file of their folders', () => {
    const quoted = new Set(quotes.map((q) => q.file));
    const files = QUOTED_DIRS.flatMap((dir) =>
      readdirSync(join(ROOT, dir))
        .filter((name) => name.endsWith('.test.ts'))
        .map((name) => `${dir}/${name}`),
    );
    expect(files.filter((file) => !quoted.has(file))).toEqual([]);
  });
});
