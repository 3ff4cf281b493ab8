import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * docs/jobs.md's table of what a handler's `ctx` holds is written by hand (with links to the
 * guides); this holds it to the JobContext interface, so a member added to the context cannot be
 * missing from the table, nor a removed one stay in it.
 */
const ROOT = resolve(import.meta.dirname, '../..');

function contextMembers(): string[] {
  const file = join(ROOT, 'src/model/job.ts');
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const context = sf.statements.find(
    (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === 'JobContext',
  );
  if (!context) throw new Error('src/model/job.ts declares no JobContext');
  return context.members.flatMap((m) => (m.name && ts.isIdentifier(m.name) ? [m.name.text] : []));
}

/** The first cell of each row of the table whose header is `ctx.`: `progress(value)` → progress. */
function tableMembers(page: string): string[] {
  const lines = page.split('\n');
  const header = lines.findIndex((line) => line.startsWith('| `ctx.`'));
  if (header < 0) throw new Error('docs/jobs.md has no `ctx.` table');
  const rows: string[] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    const name = /^\|\s*`(\w+)/.exec(line)?.[1];
    if (name) rows.push(name);
  }
  return rows;
}

describe("docs/jobs.md's ctx table", () => {
  it('lists every member of JobContext, and nothing else', () => {
    const page = readFileSync(join(ROOT, 'docs/jobs.md'), 'utf8');
    expect(tableMembers(page).sort()).toEqual(contextMembers().sort());
  });
});
