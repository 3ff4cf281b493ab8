import { DashboardRequestError } from '../../errors.ts';
import { JOB_STATES } from '../../jobControl/jobState.ts';
import { bulkForm } from '../bulkForm.ts';
import { count } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { jobFilterOf } from '../jobFilterForm.ts';
import type { Page, PageContext } from '../PageContext.ts';
import { jobTable, nextLink } from './jobTable.ts';

/** Jobs one page of a payload search reads (sluice.jobs.search's `scan`). */
const SCAN = 500;

/**
 * Search: a job by id (the jump), the jobs an idempotency key names (index reads:
 * sluice.jobs.findByKey), or the jobs of a filter whose payload field equals a value — no index
 * serves that, so each page reads SCAN jobs of the filter and their payloads, and says so.
 */
export const searchPage: Page = async (ctx) => {
  const value = (field: string) => ctx.query.get(field)?.trim() ?? '';
  const id = value('id');
  if (id !== '') {
    if (!/^\d{1,16}$/.test(id))
      throw new DashboardRequestError(400, 'id', `must be a job id (got ${JSON.stringify(id)})`);
    return { redirect: ctx.href(`/jobs/${id}`) };
  }
  const filter = jobFilterOf(ctx.query);
  const key = value('key');
  const path = value('path');
  const equals = ctx.query.get('equals') ?? '';
  let results: SafeHtml = html``;
  if (key !== '') results = await byKey(ctx, key, filter.queue);
  else if (path !== '') {
    const found = await ctx.sluice.jobs.search(filter, {
      path,
      equals,
      scan: SCAN,
      after: ctx.query.get('after') || undefined,
    });
    results = html`<p class="hint" data-field="search-cost">Read ${count(found.read)} job(s) of the filter and their payloads (no index serves a payload field; narrow the filter to read fewer)${
      found.skipped > 0 ? html`; ${count(found.skipped)} payload(s) over 64 KiB not searched` : ''
    }. ${found.next === null ? 'No more jobs match the filter.' : 'The next page reads on.'}</p>
${bulkForm(ctx, filter, { matching: false })}
${found.jobs.length === 0 ? html`<p class="empty">None of these ${count(found.read)} job(s) has ${path} = ${JSON.stringify(equals)}.</p>` : jobTable(ctx, found.jobs)}
${nextLink(ctx, found.next)}`;
  }
  const body = html`
<form class="filter search" method="get" action="${ctx.href('/search')}">
<label>job id <input name="id" inputmode="numeric"></label>
<label>idempotency key <input name="key" value="${key}"></label>
<label>payload field <input name="path" placeholder="customer.id" value="${path}"></label>
<label>equals <input name="equals" value="${equals}"></label>
<label>state <select name="state"><option value="">live (any)</option>${JOB_STATES.map(
    (s) => html`<option${s === filter.state ? html` selected` : ''}>${s}</option>`,
  )}</select></label>
<label>queue <input name="queue" value="${value('queue')}"></label>
<label>name <input name="name" value="${value('name')}"></label>
<button>Search</button>
</form>
<p class="hint">An id or a key is found by index. A payload field is compared with the text given, in the jobs of the state, queue and name chosen, ${count(SCAN)} jobs a page.</p>
${results}`;
  return { title: 'Search', section: 'search', body };
};

/** The jobs a key names: live ones by index, and with a queue a finished one while its key is kept. */
async function byKey(ctx: PageContext, key: string, queue: string | undefined): Promise<SafeHtml> {
  const ids = await ctx.sluice.jobs.findByKey(key, queue === undefined ? {} : { queue });
  const jobs = await Promise.all(ids.slice(0, 20).map((id) => ctx.sluice.jobs.get(id)));
  const rows = jobs.filter((j) => j !== null);
  return html`${queue === undefined ? html`<p class="hint">Live jobs only: give the queue to find a finished job by its key (while the key is kept).</p>` : ''}
${
  rows.length === 0
    ? html`<p class="empty">No job holds key ${JSON.stringify(key)}${queue === undefined ? '' : html` in queue ${queue}`}.</p>`
    : html`<ul class="found" data-field="by-key">${rows.map(
        (j) =>
          html`<li><a href="${ctx.href(`/jobs/${j.id}`)}">${j.id}</a> <span class="state state-${j.state}">${j.state}</span> ${j.queue} · ${j.name}</li>`,
      )}</ul>${ids.length > 20 ? html`<p class="hint">The first 20 of ${ids.length}.</p>` : ''}`
}`;
}
