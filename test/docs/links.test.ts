import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, githubSlug, links } from '../../docs/generate/markdown.ts';

const ROOT = resolve(import.meta.dirname, '../..');

function markdownUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownUnder(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

/** The pages whose links must resolve: the front door, the guides and references, the bench's page. */
const PAGES = [
  ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', 'bench/README.md'].map((page) => join(ROOT, page)),
  ...markdownUnder(join(ROOT, 'docs')),
];

/** A relative link's problem, or null when its file (and its #anchor, in a Markdown file) exists. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto:, …: not checked offline
  const [path = '', anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? page : resolve(dirname(page), decodeURIComponent(path));
  if (!file.startsWith(ROOT)) return 'points outside the repository';
  if (!existsSync(file)) return `no file ${relative(ROOT, file)}`;
  if (anchor === undefined || anchor === '') return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `#${anchor} on a file that is not Markdown`;
  return anchors(readFileSync(file, 'utf8')).has(decodeURIComponent(anchor))
    ? null
    : `no heading #${anchor} in ${relative(ROOT, file)}`;
}

describe('links in the docs', () => {
  it('every relative link resolves to a file, and every #anchor to a heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of links(readFileSync(page, 'utf8'))) {
        const problem = brokenLink(page, link.target);
        if (problem) broken.push(`${relative(ROOT, page)}:${link.line} ${link.target}: ${problem}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('anchors follow GitHub’s rules', () => {
    expect(githubSlug('Waking idle workers')).toBe('waking-idle-workers');
    expect(githubSlug('Jobs: look up, list, cancel, run now')).toBe('jobs-look-up-list-cancel-run-now');
    expect(githubSlug('`wsrep_sync_wait`')).toBe('wsrep_sync_wait');
    expect(githubSlug('Retries, backoff, timeouts & heartbeats')).toBe('retries-backoff-timeouts--heartbeats');
    expect(githubSlug('**Why** [sluice](https://x.example)?')).toBe('why-sluice');
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n### A\n')]).toEqual(['a', 'a-1', 'a-2']);
  });

  it('finds links outside code only', () => {
    const page = '[a](x.md) `[b](y.md)` ![c](d.png)\n```\n[e](f.md)\n```\n[g]: h.md\n<img src="i.png">';
    expect(links(page).map((l) => l.target)).toEqual(['x.md', 'd.png', 'h.md', 'i.png']);
  });
});
