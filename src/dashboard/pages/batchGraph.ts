import type { GraphJob } from '../../jobControl/listGraph.ts';
import type { FinishedGraph } from '../../workflows/readFinishedGraph.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../PageContext.ts';
import { BOX_H, BOX_W, svgBox, svgEdge } from './graphSvg.ts';

/** A graph of more jobs than this is left to the table (a picture of hundreds of boxes helps nobody). */
export const MAX_DRAWN_JOBS = 50;
const COLUMN_W = BOX_W + 50;
const ROW_H = BOX_H + 12;
const MARGIN = 10;

/**
 * A batch's graph, drawn as an SVG in columns: each job one column right of its deepest parent,
 * so edges run left to right. The live jobs are boxes coloured by state; its finished jobs — the
 * kept edges of `finished` (batches.finishedGraph), and finished parents its live children name —
 * are drawn with how they ended ("finished" when the history no longer says). Each box links to
 * its job page. Nothing past MAX_DRAWN_JOBS boxes. Every value goes through `html`.
 */
export function batchGraph(ctx: PageContext, jobs: readonly GraphJob[], finished: FinishedGraph): SafeHtml | '' {
  const nodes = new Map<number, { label: string; state: string; parents: number[] }>();
  for (const j of jobs)
    nodes.set(j.id, { label: `${j.id} ${j.name}`, state: j.state, parents: j.parents.map((p) => p.id) });
  const ended = (id: number) => {
    const outcome = finished.outcomes.get(id) ?? 'finished';
    return { label: `${id} ${outcome}`, state: outcome, parents: [] as number[] };
  };
  for (const e of finished.edges) {
    const child = nodes.get(e.childId) ?? ended(e.childId);
    if (!child.parents.includes(e.parentId)) child.parents.push(e.parentId);
    nodes.set(e.childId, child);
  }
  for (const e of finished.edges) if (!nodes.has(e.parentId)) nodes.set(e.parentId, ended(e.parentId));
  for (const j of jobs)
    for (const p of j.parents)
      if (!nodes.has(p.id)) nodes.set(p.id, { label: `${p.id} ${p.outcome}`, state: p.outcome, parents: [] });
  if (nodes.size === 0 || nodes.size > MAX_DRAWN_JOBS) return '';
  const column = new Map<number, number>();
  const columnOf = (id: number, path: ReadonlySet<number> = new Set()): number => {
    const known = column.get(id);
    if (known !== undefined) return known;
    const parents = (nodes.get(id)?.parents ?? []).filter((p) => nodes.has(p) && !path.has(p));
    const c = parents.length === 0 ? 0 : 1 + Math.max(...parents.map((p) => columnOf(p, new Set([...path, id]))));
    column.set(id, c);
    return c;
  };
  const rows = new Map<number, number>();
  const at = new Map<number, { x: number; y: number }>();
  for (const id of [...nodes.keys()].sort((a, b) => a - b)) {
    const c = columnOf(id);
    const r = rows.get(c) ?? 0;
    rows.set(c, r + 1);
    at.set(id, { x: MARGIN + c * COLUMN_W, y: MARGIN + r * ROW_H });
  }
  const width = MARGIN * 2 + (Math.max(...rows.keys()) + 1) * COLUMN_W - (COLUMN_W - BOX_W);
  const height = MARGIN * 2 + Math.max(...rows.values()) * ROW_H;
  const edges: SafeHtml[] = [];
  for (const [id, node] of nodes) {
    const to = at.get(id) as { x: number; y: number };
    for (const p of node.parents) {
      const from = at.get(p);
      if (from) edges.push(svgEdge(from.x + BOX_W, from.y, to.x, to.y));
    }
  }
  const boxes = [...nodes].map(([id, n]) => {
    const { x, y } = at.get(id) as { x: number; y: number };
    return svgBox(ctx, x, y, id, n.label, n.state);
  });
  return html`<svg class="workflow" data-field="batch-graph" width="${width}" height="${height}" role="img" aria-label="the graph of this batch's jobs">
${edges}${boxes}
</svg>`;
}
