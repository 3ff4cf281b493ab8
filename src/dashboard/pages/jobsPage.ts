import { DashboardRequestError } from '../../errors.ts';
import { JOB_STATES } from '../../jobControl/jobState.ts';
import { bulkForm } from '../bulkForm.ts';
import { html } from '../html.ts';
import { jobFilterOf } from '../jobFilterForm.ts';
import type { Page } from '../PageContext.ts';
import { jobTable, nextLink } from './jobTable.ts';

/**
 * The job browser: filter by state, queue, name, batch and a time range (UTC; created for live
 * jobs, finished or died for the others), keyset paging (jobs.list), and a jump to an id.
 */
export const jobsPage: Page = async (ctx) => {
  const jump = ctx.query.get('id');
  if (jump !== null && jump.trim() !== '') {
    if (!/^\d{1,16}$/.test(jump.trim()))
      throw new DashboardRequestError(400, 'id', `must be a job id (got ${JSON.stringify(jump)})`);
    return { redirect: ctx.href(`/jobs/${jump.trim()}`) };
  }
  const filter = jobFilterOf(ctx.query);
  const list = await ctx.sluice.jobs.list(filter, { limit: 50, after: ctx.query.get('after') || undefined });
  const value = (field: string) => ctx.query.get(field) ?? '';
  const body = html`
<form class="filter" method="get" action="${ctx.href('/jobs')}">
<label>state <select name="state"><option value="">live (any)</option>${JOB_STATES.map(
    (s) => html`<option${s === filter.state ? html` selected` : ''}>${s}</option>`,
  )}</select></label>
<label>queue <input name="queue" value="${value('queue')}"></label>
<label>name <input name="name" value="${value('name')}"></label>
<label>batch <input name="batch" inputmode="numeric" value="${value('batch')}"></label>
<label>from (UTC) <input name="from" type="datetime-local" step="1" value="${value('from')}"></label>
<label>to (UTC) <input name="to" type="datetime-local" step="1" value="${value('to')}"></label>
<button>Filter</button>
</form>
${bulkForm(ctx, filter)}
${jobTable(ctx, list.jobs, list.next)}
${nextLink(ctx, list.next)}`;
  return { title: 'Jobs', section: 'jobs', body };
};
