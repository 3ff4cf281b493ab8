import { DashboardRequestError } from '../../errors.ts';
import { JOB_STATES, type JobState } from '../../jobControl/jobState.ts';
import { html } from '../html.ts';
import type { Page, PageContext } from '../PageContext.ts';
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
  const filter = jobFilterOf(ctx);
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
${jobTable(ctx, list.jobs, list.next)}
${nextLink(ctx, list.next)}`;
  return { title: 'Jobs', section: 'jobs', body };
};

function jobFilterOf(ctx: PageContext): {
  state?: JobState;
  queue?: string;
  name?: string;
  batchId?: number;
  from?: Date;
  to?: Date;
} {
  const get = (field: string) => ctx.query.get(field)?.trim() || undefined;
  const state = get('state');
  if (state !== undefined && !(JOB_STATES as readonly string[]).includes(state))
    throw new DashboardRequestError(
      400,
      'state',
      `must be one of ${JOB_STATES.join(', ')} (got ${JSON.stringify(state)})`,
    );
  const batch = get('batch');
  if (batch !== undefined && !/^\d{1,16}$/.test(batch))
    throw new DashboardRequestError(400, 'batch', `must be a batch id (got ${JSON.stringify(batch)})`);
  return {
    state: state as JobState | undefined,
    queue: get('queue'),
    name: get('name'),
    batchId: batch === undefined ? undefined : Number(batch),
    from: dateOf('from', get('from')),
    to: dateOf('to', get('to')),
  };
}

/** A datetime-local value ("2026-11-24T01:02:03"), read as UTC. */
function dateOf(field: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
  if (!/^\d{4}-\d\d-\d\d/.test(text) || !Number.isFinite(date.getTime()))
    throw new DashboardRequestError(
      400,
      field,
      `must be a date and time like 2026-11-24T01:02:03 (got ${JSON.stringify(text)})`,
    );
  return date;
}
