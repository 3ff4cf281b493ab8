import type { JobInfo } from '../../jobControl/getJob.ts';
import { WORKFLOW_LIST_LIMIT } from '../../workflows/readWorkflow.ts';
import { when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import type { PageContext } from '../PageContext.ts';

/** Parents and children linked on a job page: the first this many, then a count. */
const SHOWN_LINKS = 50;

/**
 * A workflow job's fields on its page: what a held job waits for and the time it gets back, its
 * parents (each linked, with how it ended) and its children (linked; a finished one with how it
 * ended); its whole graph is the batch's page. Nothing for a job outside any workflow.
 */
export function jobWorkflow(ctx: PageContext, job: JobInfo): SafeHtml | '' {
  const flow = job.workflow;
  if (flow === null) return '';
  const link = (id: number, note = '') =>
    html`<a href="${ctx.href(`/jobs/${id}`)}" data-job="${id}">${id}</a>${note === '' ? '' : html` <span class="hint">${note}</span>`}`;
  const list = (links: SafeHtml[]) =>
    links.length === 0
      ? '—'
      : html`${links.slice(0, SHOWN_LINKS).map((l, i) => (i === 0 ? l : html`, ${l}`))}${links.length > SHOWN_LINKS ? html` … (${links.length >= WORKFLOW_LIST_LIMIT ? `${links.length} or more` : links.length} in all)` : ''}`;
  const parents = flow.parents.map((p) =>
    link(p.id, `${p.outcome}${p.continueOnFailure ? ', continue on failure' : ''}`),
  );
  const children = flow.children.map((c) => link(c.id, c.outcome ?? ''));
  return html`${flow.held ? html`<dt>waiting for</dt><dd data-field="waiting-for">${flow.held.waitingFor} parent(s) to finish; then due ${when(flow.held.runAt)}</dd>` : ''}
<dt>parents</dt><dd data-field="parents">${list(parents)}</dd>
<dt>children</dt><dd data-field="children">${list(children)}</dd>`;
}
