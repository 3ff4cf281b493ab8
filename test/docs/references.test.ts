import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readApi } from '../../docs/generate/apiReference.ts';
import { readOptionsTypes } from '../../docs/generate/optionsReference.ts';
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

  it('say what every option does', () => {
    const bare = readOptionsTypes(ROOT).flatMap((t) =>
      t.options.filter((o) => o.description === '').map((o) => `${t.name}.${o.name} (${t.file})`),
    );
    expect(bare, 'options without a doc comment (docs/reference/options.md would show "—")').toEqual([]);
  });

  it('give every public call of the API reference a description', () => {
    const bare = readApi(ROOT).sections.flatMap((s) =>
      s.calls.filter((c) => !c.property && c.deprecated === null && c.description === '').map((c) => c.path),
    );
    expect(bare, 'public calls without a doc comment (docs/reference/api.md would show none)').toEqual([]);
  });

  it('list every public call in getting-started’s "API at a glance"', () => {
    const glance = namesIn(section(readFileSync(join(ROOT, 'docs/getting-started.md'), 'utf8'), 'The API at a glance'));
    const missing = readApi(ROOT)
      .sections.flatMap((s) => s.calls)
      .filter((c) => !c.property && c.deprecated === null && !c.path.endsWith('()'))
      .map((c) => c.path)
      .filter((path) => !glance.has(path));
    expect(missing, 'calls the glance table of docs/getting-started.md does not name').toEqual([]);
  });

  it('read the names of a glance table as written', () => {
    expect([...namesIn('| `sluice.jobs.{get, list}` | x |\n| `new Sluice(options?)`, `jobOf(d, p)` | y |')]).toEqual([
      'sluice.jobs.get',
      'sluice.jobs.list',
      'new Sluice',
      'jobOf',
    ]);
  });
});

/** A `## title` section of a page, up to the next heading of its level. */
function section(page: string, title: string): string {
  const from = page.indexOf(`## ${title}\n`);
  if (from < 0) throw new Error(`no section ## ${title}`);
  const next = page.indexOf('\n## ', from + 1);
  return page.slice(from, next < 0 ? undefined : next);
}

/** The calls a table names in its code spans: `a.{b, c}(x)` names a.b and a.c; arguments dropped. */
function namesIn(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, span] of text.matchAll(/`([^`]+)`/g)) {
    const call = (span as string).replace(/\(.*\)$/, '');
    const braces = /^(.*)\{([^}]*)\}$/.exec(call);
    if (braces) for (const name of (braces[2] as string).split(',')) names.add(`${braces[1]}${name.trim()}`);
    else names.add(call);
  }
  return names;
}
