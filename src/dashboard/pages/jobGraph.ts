import type { JobInfo } from '../../jobControl/getJob.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../PageContext.ts';
import { BOX_W, svgBox as box, svgEdge as edge } from './graphSvg.ts';

/** A neighbourhood wider than this on either side is left to the lists above it. */
const MAX_DRAWN = 12;
const ROW_H = 40;
/** The x of the parents', the job's and the children's column. */
const LEFT = 10;
const MIDDLE = 200;
const RIGHT = 390;

/**
 * A workflow job's neighbourhood as an SVG: its parents (left, each coloured by how it ended), the
 * job (middle), its children (right: live ones, and finished ones with how they ended), each box a
 * link to its job page and each edge a line.
 * Nothing for a job outside any workflow, or with more than MAX_DRAWN parents or children (the
 * lists above it say it all). Every value goes through the escaping `html` template.
 */
export function jobGraph(ctx: PageContext, job: JobInfo): SafeHtml | '' {
  const flow = job.workflow;
  if (flow === null || flow.parents.length > MAX_DRAWN || flow.children.length > MAX_DRAWN) return '';
  const rows = Math.max(1, flow.parents.length, flow.children.length);
  const height = rows * ROW_H + 10;
  const yOf = (i: number, n: number) => 5 + ((rows - n) * ROW_H) / 2 + i * ROW_H;
  const middle = yOf(0, 1);
  const parents = flow.parents.map((p, i) => {
    const y = yOf(i, flow.parents.length);
    return html`${edge(LEFT + BOX_W, y, MIDDLE, middle)}${box(ctx, LEFT, y, p.id, `${p.id} ${p.outcome}`, p.outcome)}`;
  });
  const children = flow.children.map((c, i) => {
    const y = yOf(i, flow.children.length);
    const label = c.outcome ? `${c.id} ${c.outcome}` : String(c.id);
    return html`${edge(MIDDLE + BOX_W, middle, RIGHT, y)}${box(ctx, RIGHT, y, c.id, label, c.outcome ?? 'held')}`;
  });
  return html`<h2>Workflow</h2>
<svg class="workflow" data-field="workflow-graph" width="${RIGHT + BOX_W + 10}" height="${height}" role="img" aria-label="parents and children of job ${job.id}">
${parents}${children}${box(ctx, MIDDLE, middle, job.id, `${job.id} ${job.state}`, job.state)}
</svg>`;
}
