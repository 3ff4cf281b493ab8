import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderReferences } from '../../docs/generate/references.ts';
import { OPTIONS_SOURCES } from '../../docs/generate/sources.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe('the references generated from the code (npm run docs)', () => {
  it('are committed as npm run docs writes them', async () => {
    for (const page of await renderReferences(ROOT)) {
      const committed = readFileSync(join(ROOT, page.path), 'utf8');
      expect(committed, `${page.path} is stale: run npm run docs and commit it`).toBe(page.text);
    }
  });

  it('read every options file under src/', () => {
    const optionsFiles = filesUnder(join(ROOT, 'src'))
      .filter((file) => file.endsWith('Options.ts'))
      .map((file) => relative(ROOT, file));
    const listed = new Set(OPTIONS_SOURCES.map((s) => s.file));
    expect(
      optionsFiles.filter((file) => !listed.has(file)),
      'options files missing from OPTIONS_SOURCES in docs/generate/sources.ts',
    ).toEqual([]);
  });
});
