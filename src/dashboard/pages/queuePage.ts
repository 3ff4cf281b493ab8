import { DashboardRequestError } from '../../errors.ts';
import { JOB_STATES, type JobState } from '../../jobControl/jobState.ts';
import { QUEUE_NAME } from '../../model/queueName.ts';
import { isQueuePattern, patternMatches } from '../../model/queuePattern.ts';
import { NAME_PATTERN } from '../../model/validateJob.ts';
import { actionButton } from '../actionButton.ts';
import { bulkForm } from '../bulkForm.ts';
import { count, duration, when } from '../format.ts';
import { groupsTable } from '../groupsTable.ts';
import { html, jsonScript } from '../html.ts';
import { limitsForm } from '../limitsForm.ts';
import type { Page } from '../PageContext.ts';
import { type QueueCounts, queueCounts } from '../queueCounts.ts';
import { queueTimingCharts } from '../queueTimingCharts.ts';
import { queueTimings } from '../queueTimings.ts';
import { jobTable, nextLink } from './jobTable.ts';

/** Index entries of the history the queue's chart reads at most (it finds the queue's among every queue's). */
const CHART_MAX_ROWS = 20_000;

/**
 * One queue: pause / resume, its counts, its limits (with a form to change them) and its groups,
 * the workers that listen to it, its jobs finished and dead per minute over the last hour, by job
 * name too, and its run and wait p50/p95 per minute (of one job name with `?name=`) from the
 * history, its wait and run times by job name as the workers recorded them, its jobs by state.
 */
export const queuePage: Page = async (ctx, [name]) => {
  let queue = '';
  try {
    queue = decodeURIComponent(name ?? '');
  } catch {
    // a malformed %-escape: not a queue name either
  }
  if (!QUEUE_NAME.test(queue))
    throw new DashboardRequestError(400, 'queue', `is not a queue name (${JSON.stringify(queue)})`);
  const stateParam = ctx.query.get('state') ?? 'waiting';
  if (!(JOB_STATES as readonly string[]).includes(stateParam))
    throw new DashboardRequestError(400, 'state', `must be one of ${JOB_STATES.join(', ')}`);
  const state = stateParam as JobState;
  const jobName = ctx.query.get('name') || null;
  if (jobName !== null && !NAME_PATTERN.test(jobName))
    throw new DashboardRequestError(400, 'name', `is not a job name (${JSON.stringify(jobName)})`);
  const [paused, workers, limits, groups, timings] = await Promise.all([
    ctx.sluice.queues.paused(),
    ctx.sluice.workers.list({ metrics: true }),
    ctx.sluice.queues.limits({ queues: [queue] }),
    groupsTable(ctx, queue),
    ctx.sluice.history.timings({ queue, name: jobName ?? undefined, maxRows: CHART_MAX_ROWS }),
  ]);
  const { bucketSeconds, finished, died, capped } = timings;
  const minutes = { bucketSeconds, finished, died, capped };
  const pausedRow = paused.find((p) => p.queue === queue);
  const [counts] = (await queueCounts(ctx, [queue], {
    paused: new Set(paused.map((p) => p.queue)),
    workerQueues: workers.map((w) => w.queues),
  })) as [QueueCounts];
  const charts = queueTimingCharts(ctx, timings, jobName, CHART_MAX_ROWS);
  const list = await ctx.sluice.jobs.list({ queue, state }, { limit: 50, after: ctx.query.get('after') ?? undefined });
  const listening = workers.filter((w) =>
    w.queues.some((e) => e === queue || (isQueuePattern(e) && patternMatches(e, queue))),
  );
  const badges: Partial<Record<JobState, { count: number; exact: boolean }>> = {
    waiting: counts.ready,
    running: counts.running,
    dead: counts.dead,
    held: counts.held,
  };
  const tab = (s: JobState) => {
    const badge = badges[s];
    return html`<a href="${ctx.href(ctx.path, { state: s, name: jobName })}"${s === state ? html` aria-current="page"` : ''}>${s}${
      badge ? html` <span class="badge">${count(badge.count, badge.exact)}</span>` : ''
    }</a>`;
  };
  const body = html`
<section class="queue-status ${counts.problems.length > 0 ? 'problem' : ''}">
<p>${pausedRow ? html`<b class="paused">Paused</b> since ${when(pausedRow.pausedAt)}.` : html`<b>Active.</b>`}
${count(counts.ready.count, counts.ready.exact)} ready, ${count(counts.notDue.count, counts.notDue.exact)} delayed or retrying, ${count(counts.held.count, counts.held.exact)} held, ${count(counts.running.count, counts.running.exact)} running, ${count(counts.dead.count, counts.dead.exact)} dead. Oldest ready job waited ${duration(counts.oldestReadyMs)}. ${counts.problems.length > 0 ? html`<span class="problems">${counts.problems.join(', ')}</span>` : ''}</p>
${
  pausedRow
    ? actionButton(ctx, { name: 'resume-queue', label: 'Resume queue', fields: { queue } })
    : actionButton(ctx, { name: 'pause-queue', label: 'Pause queue', fields: { queue } })
}
</section>
<h2>Flow control</h2>
${limitsForm(ctx, queue, limits[0] ?? null)}
<h3>Groups</h3>
${groups}
<h2>Workers listening (${listening.length})</h2>
${
  listening.length === 0
    ? html`<p class="empty">No live worker listens to this queue.</p>`
    : html`<ul class="workers">${listening.map(
        (w) =>
          html`<li>${w.host} pid ${w.pid} (${w.name}): ${w.inFlight} in flight of ${w.concurrencyLimit}, heartbeat ${duration(w.heartbeatAgeMs)} ago</li>`,
      )}</ul>`
}
<h2>Throughput</h2>
<section class="charts">
<figure><figcaption>Finished and dead per minute, last hour${minutes.capped ? ` (of the last ${count(CHART_MAX_ROWS)} jobs finished in any queue: older minutes undercounted)` : ''}</figcaption><div class="chart" data-series="queue-throughput-minutes"></div></figure>
${charts.byName}
</section>
${jsonScript('queue-throughput-minutes', minutes)}
<h2>Wait and run time</h2>
${charts.latency}
<h3>By job name, since each worker started</h3>
${queueTimings(
  queue,
  listening.map((w) => w.metrics),
)}
<h2>Jobs</h2>
<nav class="tabs">${JOB_STATES.map(tab)}</nav>
${bulkForm(ctx, { queue, state })}
${jobTable(ctx, list.jobs, list.next)}
${nextLink(ctx, list.next)}`;
  return { title: `Queue ${queue}`, section: 'overview', body };
};
