import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeBlocks } from '../../docs/generate/markdown.ts';
import { CLI_PAGE } from '../../docs/generate/sources.ts';

/**
 * The shell examples of the docs name commands and flags the CLI has: every `sluice <command>`
 * line of a ```sh block (README and docs/) names a command of `sluice --help`, and each of its
 * `--flags` appears in that command's own help, as the generated CLI reference (kept current by
 * references.test.ts) prints it. A renamed or removed flag fails here before a reader copies it.
 */
const ROOT = resolve(import.meta.dirname, '../..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = [join(ROOT, 'README.md'), ...markdownUnder(join(ROOT, 'docs'))];

/** Each command's help text, from the CLI reference's `## sluice <command>` sections. */
function helpByCommand(): Map<string, string> {
  const page = readFileSync(join(ROOT, CLI_PAGE), 'utf8');
  const help = new Map<string, string>();
  for (const section of page.split(/^## /m).slice(1)) {
    const title = /^sluice(?: ([a-z-]+))?\n/.exec(section);
    if (title) help.set(title[1] ?? '', section);
  }
  return help;
}

/** The `sluice …` invocations of a shell line (after `npx`, `npm run sluice --`, or alone), without comments. */
function invocations(line: string): { command: string; flags: string[] }[] {
  const code = line.replace(/\s#.*$/, '');
  return [...code.matchAll(/(?:^|[\s;&|(])(?:npx |npm run )?sluice(?: --)? ([a-z][a-z-]*)([^;&|)]*)/g)].map((m) => ({
    command: m[1] as string,
    flags: [...(m[2] as string).matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((f) => f[1] as string),
  }));
}

describe('the shell examples in the docs', () => {
  it('name the CLI’s commands, with flags each command takes', () => {
    const help = helpByCommand();
    const wrong: string[] = [];
    let seen = 0;
    for (const page of PAGES) {
      for (const block of codeBlocks(readFileSync(page, 'utf8'))) {
        if (!['sh', 'bash', 'shell', 'console'].includes(block.lang)) continue;
        block.code.split('\n').forEach((line, i) => {
          for (const { command, flags } of invocations(line)) {
            seen++;
            const at = `${relative(ROOT, page)}:${block.line + 1 + i}`;
            const text = help.get(command);
            if (text === undefined) {
              wrong.push(`${at}: sluice ${command} is not a command`);
              continue;
            }
            for (const flag of flags) {
              const global = help.get('')?.includes(flag) ?? false;
              if (!global && !new RegExp(`${flag}(?![a-z-])`).test(text))
                wrong.push(`${at}: sluice ${command} has no ${flag}`);
            }
          }
        });
      }
    }
    expect(seen).toBeGreaterThan(10);
    expect(wrong).toEqual([]);
  });

  it('reads invocations as a shell line writes them', () => {
    expect(invocations('npx sluice work --jobs ./jobs --concurrency 20   # as many --as you need')).toEqual([
      { command: 'work', flags: ['--jobs', '--concurrency'] },
    ]);
    expect(invocations('npm run sluice -- queue pause mail && sluice stats --json')).toEqual([
      { command: 'queue', flags: [] },
      { command: 'stats', flags: ['--json'] },
    ]);
  });
});
