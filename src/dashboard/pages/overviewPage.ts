import type { QueuePromiseState } from '../../api/queuesApi.ts';
import type { QueueLimitsState } from '../../queues/queueLimits.ts';
import { jobsUnknownToWorkers } from '../../worker/jobsUnknownToWorkers.ts';
import { count, duration } from '../format.ts';
import { html, jsonScript } from '../html.ts';
import { maintenancePanel } from '../maintenancePanel.ts';
import type { Page } from '../PageContext.ts';
import { queueCounts } from '../queueCounts.ts';

/** Most queues the overview shows, in name order (their counts take a few statements in all). */
const QUEUES_SHOWN = 200;

/**
 * Per queue: ready / delayed or retrying / running / dead, the oldest ready job's age, its
 * workers, its jobs finished in the last 5 minutes, its latency promise and whether the maintenance
 * leader found it kept, whether its cap or rate holds its due jobs back (read by key),
 * problems highlighted (a job name no running worker knows among them); whether maintenance runs
 * (maintenancePanel); the fleet's throughput
 * over the last hour (per minute) and day (per hour), from the history and the dead jobs.
 */
export const overviewPage: Page = async (ctx) => {
  const after = ctx.query.get('after') || undefined;
  const [page, paused, promises, workers, minutes, hours, recent, health] = await Promise.all([
    ctx.sluice.queues.list({ max: QUEUES_SHOWN, ...(after === undefined ? {} : { after }) }),
    ctx.sluice.queues.paused(),
    ctx.sluice.queues.promises(),
    ctx.sluice.workers.list(),
    ctx.sluice.history.throughput({ bucketSeconds: 60, buckets: 60 }),
    ctx.sluice.history.throughput({ bucketSeconds: 3_600, buckets: 24 }),
    ctx.sluice.history.perQueue({ windowSeconds: 300 }),
    ctx.sluice.workers.maintenance(),
  ]);
  const names = page.queues;
  // What workers.unknownJobs() reads, from the listing already here: one statement fewer.
  const unknownJobs = jobsUnknownToWorkers(workers);
  const unknownIn = new Map<string, string[]>();
  for (const u of unknownJobs) for (const q of u.queues) unknownIn.set(q, [...(unknownIn.get(q) ?? []), u.name]);
  const context = { paused: new Set(paused.map((p) => p.queue)), workerQueues: workers.map((w) => w.queues) };
  const [queues, limits] = await Promise.all([
    queueCounts(ctx, names, context),
    ctx.sluice.queues.limits({ queues: names }),
  ]);
  const limitsOf = new Map(limits.map((l) => [l.queue, l]));
  // The queues past the page (it may stop short of QUEUES_SHOWN: list()): their sums, as one more row, never dropped.
  const others = page.next === null ? null : await ctx.sluice.queues.others(page.next, { max: ctx.options.countLimit });
  const promiseOf = new Map(promises.map((p) => [p.queue, p]));
  const cell = (c: { count: number; exact: boolean }, state: string) =>
    html`<td class="num" data-count="${state}">${count(c.count, c.exact)}</td>`;
  const body = html`
${maintenancePanel(health)}
${unknownJobs.map(
  (u) =>
    html`<p class="notice failure" data-unknown-job="${u.name}">No running worker knows job <code>${u.name}</code> (queue ${u.queues.join(', ')}): ${count(u.workers)} worker(s) gave back ${count(u.givenBack)} of its job(s), no attempt spent. They wait for a worker whose jobs folder has it.</p>`,
)}
<table class="queues">
<thead><tr><th>queue</th><th>ready</th><th>delayed / retrying</th><th>held</th><th>running</th><th>dead</th><th>oldest ready</th><th>finished, 5 min</th><th>workers</th><th>promise</th><th>status</th></tr></thead>
<tbody>${queues.map((counts) => {
    const promise = promiseOf.get(counts.queue);
    const problems = [
      ...counts.problems,
      ...(promise?.brokenAt ? ['promise broken'] : []),
      ...(unknownIn.get(counts.queue) ?? []).map((name) => `no running worker knows job ${name}`),
    ];
    const q = { ...counts, problems };
    return html`<tr data-queue="${q.queue}" class="${q.problems.length > 0 ? 'problem' : ''}">
<td><a href="${ctx.href(`/queues/${encodeURIComponent(q.queue)}`)}">${q.queue}</a></td>
${cell(q.ready, 'ready')}${cell(q.notDue, 'not-due')}${cell(q.held, 'held')}${cell(q.running, 'running')}${cell(q.dead, 'dead')}
<td class="num ${q.oldestReadyMs !== null && q.oldestReadyMs > ctx.options.problemAgeMs ? 'bad' : ''}">${duration(q.oldestReadyMs)}</td>
<td class="num" data-count="finished">${count(recent.counts.get(q.queue) ?? 0, !recent.capped)}</td>
<td class="num">${q.workers}</td>
${promiseCell(promise)}
<td>${q.problems.length > 0 ? html`<span class="problems">${q.problems.join(', ')}</span>` : ''}${limitedCell(limitsOf.get(q.queue))}${q.problems.length === 0 && !limitsOf.get(q.queue)?.blocked ? 'ok' : ''}</td>
</tr>`;
  })}${
    others && others.queues.count > 0
      ? html`<tr data-queue="(others)" class="others">
<td>${count(others.queues.count, others.queues.exact)} more queues</td>
${cell(others.ready, 'ready')}${cell(others.notDue, 'not-due')}${cell(others.held, 'held')}${cell(others.running, 'running')}${cell(others.dead, 'dead')}
<td class="num">—</td><td class="num">—</td><td class="num">—</td><td class="promise">—</td><td>—</td>
</tr>`
      : ''
  }</tbody>
</table>
${queues.length === 0 ? html`<p class="empty">No queues yet: nothing has been enqueued.</p>` : ''}
${
  page.next === null
    ? ''
    : html`<p class="hint" data-queues-page="${names.length}">${count(names.length)} queues in name order${after === undefined ? '' : html` after <code>${after}</code>`}; the last row sums the queues after them. <a href="${ctx.href('/', { after: page.next })}" data-next-queues>Next queues</a> · open any queue by its address, /queues/NAME.</p>`
}
<p class="hint">Counts read at most ${count(ctx.options.countLimit)} index entries each; "N+" means at least N, "?" that none was found among them. A promise ("starts within", "at most ready") is judged by the maintenance leader at each pass (<code>sluice queue promise</code>).</p>
<section class="charts">
<figure><figcaption>Finished and dead per minute, last hour${minutes.capped ? ' (capped)' : ''}</figcaption><div class="chart" data-series="throughput-minutes"></div></figure>
<figure><figcaption>Finished and dead per hour, last day${hours.capped ? ' (capped)' : ''}</figcaption><div class="chart" data-series="throughput-hours"></div></figure>
</section>
${jsonScript('throughput-minutes', minutes)}
${jsonScript('throughput-hours', hours)}`;
  return { title: 'Overview', section: 'overview', body };
};

/**
 * What holds a queue's due jobs back by its own limits, read by key with its row (queues.limits):
 * at its cap, over its rate for this window, or paused by a handler's rate-limit signal — a state,
 * not a fault, but never "ok".
 */
function limitedCell(limits: QueueLimitsState | undefined) {
  switch (limits?.blocked) {
    case 'concurrency':
      return html` <span class="limited" data-limited="capped">at its cap (${limits.running} of ${limits.concurrency ?? 0} running)</span>`;
    case 'rate':
      return html` <span class="limited" data-limited="rate">rate limited (${limits.rateUsed} of ${limits.rate?.limit ?? 0} started; window ends in ${duration(limits.windowLeftMs)})</span>`;
    case 'paused':
      return html` <span class="limited" data-limited="paused">rate-limit pause for ${duration(limits.pausedForMs)}</span>`;
    default:
      return '';
  }
}

/** A queue's promise ("≤ 30 s · ≤ 10,000 ready"), and since when it is broken; "—" without one. */
function promiseCell(promise: QueuePromiseState | undefined) {
  if (!promise) return html`<td class="promise">—</td>`;
  const terms = [
    ...(promise.startWithinMs === null ? [] : [`starts within ${duration(promise.startWithinMs)}`]),
    ...(promise.maxReady === null ? [] : [`at most ${count(promise.maxReady)} ready`]),
  ].join(' · ');
  return promise.brokenAt
    ? html`<td class="promise bad" data-promise="broken">${terms}: broken for ${duration(promise.brokenForMs)}</td>`
    : html`<td class="promise" data-promise="kept">${terms}</td>`;
}
