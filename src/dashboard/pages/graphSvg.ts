import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../PageContext.ts';

/** A job's box in a drawn graph. */
export const BOX_W = 120;
export const BOX_H = 28;

/** A job's box at (x, y): a link to its page, coloured by its state (or how it ended), labelled. */
export function svgBox(ctx: PageContext, x: number, y: number, id: number, label: string, state: string): SafeHtml {
  return html`<a href="${ctx.href(`/jobs/${id}`)}" data-job="${id}"><rect x="${x}" y="${y}" width="${BOX_W}" height="${BOX_H}" rx="4" class="node node-${state}"></rect><text x="${x + 8}" y="${y + 18}">${label}</text></a>`;
}

/** A dependency: a line from the right side of the parent's box at (x1, y1) to the left of the child's at (x2, y2). */
export function svgEdge(x1: number, y1: number, x2: number, y2: number): SafeHtml {
  return html`<line x1="${x1}" y1="${y1 + BOX_H / 2}" x2="${x2}" y2="${y2 + BOX_H / 2}" class="edge"></line>`;
}
