/**
 * What the docs tests read out of a Markdown page: its fenced code blocks, its headings' anchors
 * (by GitHub's rules) and its links. A line-based reader for the Markdown these pages use, not a
 * full CommonMark parser.
 */

export interface CodeBlock {
  /** The info string's first word (`ts`, `sh`, …), or ''. */
  readonly lang: string;
  /** The info string's words after the first (`ts signature` → ['signature']). */
  readonly tags: readonly string[];
  readonly code: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

export interface Link {
  readonly target: string;
  /** 1-based line. */
  readonly line: number;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)([^`]*)/;

/** The page's lines, each marked as prose or as part of a fenced code block (fences included). */
function scan(text: string): { line: string; inCode: boolean }[] {
  const out: { line: string; inCode: boolean }[] = [];
  let fence: string | null = null;
  for (const line of text.split('\n')) {
    const open = FENCE.exec(line);
    if (fence === null && open) {
      fence = open[1] as string;
      out.push({ line, inCode: true });
    } else if (fence !== null) {
      out.push({ line, inCode: true });
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') fence = null;
    } else {
      out.push({ line, inCode: false });
    }
  }
  return out;
}

export function codeBlocks(text: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const fence = open[1] as string;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length; i++) {
      const line = lines[i] as string;
      if (line.trim().startsWith(fence) && line.trim().replace(/[`~]/g, '') === '') break;
      body.push(line);
    }
    const tags = (open[3] ?? '')
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '');
    blocks.push({ lang: (open[2] as string).toLowerCase(), tags, code: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** A heading's text as GitHub renders it: code spans, links, images, emphasis and HTML reduced to text. */
function headingText(markdown: string): string {
  return markdown
    .replace(/`+([^`]*)`+/g, '$1')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/\*+/g, '')
    .replace(/(^|\W)_+(\S(?:.*?\S)?)_+(?=\W|$)/g, '$1$2');
}

/** GitHub's anchor for a heading (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
export function githubSlug(heading: string): string {
  return headingText(heading)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page defines: its headings' slugs (repeats numbered -1, -2, …) and HTML ids and names. */
export function anchors(text: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line, inCode } of scan(text)) {
    if (inCode) continue;
    const heading = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(line);
    if (heading) {
      const slug = githubSlug(heading[1] as string);
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      found.add(n === 0 ? slug : `${slug}-${n}`);
    }
    for (const html of line.matchAll(/<[a-z][^>]*\s(?:id|name)="([^"]+)"/gi)) found.add(html[1] as string);
  }
  return found;
}

/** Every link and image target outside code (inline, reference definitions, HTML href and src). */
export function links(text: string): Link[] {
  const out: Link[] = [];
  scan(text).forEach(({ line, inCode }, i) => {
    if (inCode) return;
    const prose = line.replace(/(`+)[^`]*?\1/g, (span) => ' '.repeat(span.length));
    for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      out.push({ target: m[1] as string, line: i + 1 });
    }
    const definition = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
    if (definition) out.push({ target: definition[1] as string, line: i + 1 });
    for (const m of prose.matchAll(/<(?:a|img)\s[^>]*(?:href|src)="([^"]+)"/gi)) {
      out.push({ target: m[1] as string, line: i + 1 });
    }
  });
  return out;
}
