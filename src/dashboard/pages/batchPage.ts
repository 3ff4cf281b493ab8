import { DashboardRequestError } from '../../errors.ts';
import type { GraphJob } from '../../jobControl/listGraph.ts';
import { batchProgress } from '../batchProgress.ts';
import { count, when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { Page, PageContext } from '../PageContext.ts';
import { batchEnded } from './batchEnded.ts';
import { batchGraph, MAX_DRAWN_JOBS } from './batchGraph.ts';
import { nextLink } from './jobTable.ts';

/** Jobs per page of the graph's table: a first page that holds the whole graph is also drawn. */
const PAGE = MAX_DRAWN_JOBS;
/** Finished edges read for the picture at most: a graph with more is not drawn (MAX_DRAWN_JOBS boxes). */
const FINISHED_EDGES = 200;
/** Parents and children listed per row of the table: the first this many, then a count. */
const SHOWN_LINKS = 20;

/**
 * A batch: its counts, and its graph (sluice.batches.graph: its live jobs with their parents and
 * children; sluice.batches.finishedGraph: the edges of those that finished) — drawn as an SVG when
 * its live and finished jobs fit MAX_DRAWN_JOBS boxes, and its live jobs always as a paged table
 * (job, state, parents, children).
 */
export const batchPage: Page = async (ctx, [idText]) => {
  if (!/^\d{1,16}$/.test(idText ?? ''))
    throw new DashboardRequestError(400, 'batch', `must be a batch id (got ${JSON.stringify(idText)})`);
  const id = Number(idText);
  const batch = await ctx.sluice.batches.get(id);
  if (!batch)
    return { title: `Batch ${id}`, section: 'batches', status: 404, body: html`<p class="empty">No batch ${id}.</p>` };
  const after = ctx.query.get('after') || undefined;
  // The first page reads one job more: whether the whole live graph fits a picture.
  const graph = await ctx.sluice.batches.graph(id, { limit: after === undefined ? PAGE + 1 : PAGE, after });
  const small = after === undefined && graph.next === null && graph.jobs.length <= PAGE;
  const next = graph.jobs.length > PAGE ? await firstPageNext(ctx, id) : graph.next;
  const ended = after === undefined ? await batchEnded(ctx, batch) : html``;
  // Its finished part, from the kept edges (history): drawn with the live part when both fit.
  const finished = small ? await ctx.sluice.batches.finishedGraph(id, { limit: FINISHED_EDGES }) : null;
  const drawn = finished?.complete ? batchGraph(ctx, graph.jobs, finished) : '';
  // Only the first page says why there is no picture; a batch without edges has no graph to draw.
  const hasGraph =
    graph.jobs.some((j) => j.parents.length + j.children.length > 0) || (finished?.edges.length ?? 0) > 0;
  const picture =
    drawn !== '' || after !== undefined || !hasGraph
      ? drawn
      : html`<p class="hint" data-field="graph-not-drawn">Not drawn: the graph has more than ${MAX_DRAWN_JOBS} jobs; the table below lists its live ones.</p>`;
  const body = html`
${batch.name === null ? '' : html`<p class="batch-name">${batch.name}</p>`}
<p>${batchProgress(batch)}</p>
<p>${count(batch.size)} jobs: ${count(batch.pending)} pending, ${count(batch.succeeded)} succeeded, ${count(batch.dead)} dead, ${count(batch.cancelled)} cancelled. Created ${when(batch.createdAt)}; ${batch.finishedAt ? html`finished ${when(batch.finishedAt)}` : 'not finished'}. <a href="${ctx.href('/jobs', { batch: id })}">Its jobs</a>.</p>
<h2>Graph</h2>
${picture}
${graphTable(ctx, graph.jobs.slice(0, PAGE))}
${graph.edgesComplete ? '' : html`<p class="hint">Some jobs have more edges than a page reads: their pages list them.</p>`}
${nextLink(ctx, next)}
<p class="hint">The table lists the live jobs. The picture also shows the finished ones, with how they ended, for as long as the history keeps them.</p>
${ended}`;
  return { title: `Batch ${id}`, section: 'batches', body };
};

/** The cursor after the first PAGE jobs, when the first read took more (to see whether a picture fits). */
async function firstPageNext(ctx: PageContext, id: number): Promise<string | null> {
  return (await ctx.sluice.batches.graph(id, { limit: PAGE })).next;
}

function graphTable(ctx: PageContext, jobs: readonly GraphJob[]): SafeHtml {
  if (jobs.length === 0) return html`<p class="empty">No live jobs: the graph has run (or was cancelled).</p>`;
  const link = (id: number, note = '') =>
    html`<a href="${ctx.href(`/jobs/${id}`)}">${id}</a>${note === '' ? '' : html` <span class="hint">${note}</span>`}`;
  const list = (links: SafeHtml[]) =>
    links.length === 0
      ? '—'
      : html`${links.slice(0, SHOWN_LINKS).map((l, i) => (i === 0 ? l : html`, ${l}`))}${links.length > SHOWN_LINKS ? html` … (${links.length} in all)` : ''}`;
  return html`<table class="jobs graph" data-field="batch-graph-table">
<thead><tr><th>job</th><th>name</th><th>state</th><th>parents</th><th>children</th></tr></thead>
<tbody>${jobs.map(
    (j) => html`<tr data-job-id="${j.id}" class="state-${j.state}">
<td>${link(j.id)}</td><td>${j.name}</td><td><span class="state">${j.state}</span></td>
<td>${list(j.parents.map((p) => link(p.id, p.outcome)))}</td>
<td>${list(j.children.map((c) => link(c)))}</td>
</tr>`,
  )}</tbody>
</table>`;
}
