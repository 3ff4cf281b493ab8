import type { JobSummary } from '../../jobControl/listJobs.ts';
import { when } from '../format.ts';
import { html, type SafeHtml } from '../html.ts';
import { isNoticeParam } from '../notices.ts';
import type { PageContext } from '../PageContext.ts';

/**
 * A listing's jobs as a table; each id links to the job's page, and (unless read-only) each row
 * has a checkbox of the page's bulk form. A page of a filter no index
 * serves can come back empty with more to read (`next`): it says so rather than "no jobs".
 */
export function jobTable(ctx: PageContext, jobs: readonly JobSummary[], next: string | null = null): SafeHtml {
  if (jobs.length === 0 && next !== null)
    return html`<p class="empty">None found among the index entries this page read (the filter is checked row by row); the next page reads on.</p>`;
  if (jobs.length === 0) return html`<p class="empty">No jobs.</p>`;
  const pick = !ctx.options.readOnly;
  return html`<table class="jobs">
<thead><tr>${pick ? selectAllCell : ''}<th>id</th><th>state</th><th>queue</th><th>name</th><th>priority</th><th>attempts</th><th>run at / finished</th><th>held by</th><th>last error</th></tr></thead>
<tbody>${jobs.map(
    (j) => html`<tr data-job-id="${j.id}" class="state-${j.state}">
${pick ? selectCell(j.id) : ''}<td><a href="${ctx.href(`/jobs/${j.id}`)}">${j.id}</a></td>
<td><span class="state">${j.state}</span></td>
<td><a href="${ctx.href(`/queues/${encodeURIComponent(j.queue)}`)}">${j.queue}</a></td>
<td>${j.name}</td>
<td>${j.priority}</td>
<td>${j.retryTimes}${j.maxRetries === null ? '' : ` / ${j.maxRetries}`}</td>
<td>${when(j.finishedAt ?? j.runAt)}</td>
<td class="mono">${j.lockId ?? ''}</td>
<td class="error">${j.error ?? ''}</td>
</tr>`,
  )}</tbody>
</table>`;
}

/** The header cell that ticks every row of the table (dashboard.js). */
export const selectAllCell = html`<th class="pick"><input type="checkbox" class="select-all" aria-label="select every job shown"></th>`;

/** A row's checkbox: it belongs to the page's bulk form (bulkForm.ts), wherever the table is. */
export function selectCell(id: number): SafeHtml {
  return html`<td class="pick"><input type="checkbox" name="id" value="${id}" form="bulk" aria-label="select job ${id}"></td>`;
}

/** "Next page" for a keyset listing (the cursor is opaque; the filter is kept). */
export function nextLink(ctx: PageContext, next: string | null, param = 'after'): SafeHtml {
  if (next === null) return html``;
  const query = Object.fromEntries([...ctx.query].filter(([k]) => !isNoticeParam(k)));
  return html`<p class="paging"><a href="${ctx.href(ctx.path, { ...query, [param]: next })}">Next page →</a></p>`;
}
