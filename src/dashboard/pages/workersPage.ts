import type { JobSummary } from '../../jobControl/listJobs.ts';
import { claimKeyOf, workerKeyOf } from '../../model/claimKey.ts';
import { count, duration, when } from '../format.ts';
import { html } from '../html.ts';
import type { Page } from '../PageContext.ts';

/** Most running jobs the page reads to show what each worker holds. */
const RUNNING_SHOWN = 1_000;

/**
 * The worker registry — host, pid, heartbeat age (DB clock), in flight / limit, load, counters —
 * and the jobs each worker holds (the running jobs, by their claim key: the end of the worker's id).
 */
export const workersPage: Page = async (ctx) => {
  const [workers, running] = await Promise.all([
    ctx.sluice.workers.list(),
    ctx.sluice.jobs.list({ state: 'running' }, { limit: RUNNING_SHOWN }),
  ]);
  const held = new Map<string, JobSummary[]>();
  for (const job of running.jobs) {
    if (!job.lockId) continue;
    const key = claimKeyOf(job.lockId);
    held.set(key, [...(held.get(key) ?? []), job]);
  }
  const body = html`
${
  workers.length === 0
    ? html`<p class="empty">No live worker in the registry.</p>`
    : html`<table class="workers">
<thead><tr><th>host</th><th>pid</th><th>name</th><th>queues</th><th>heartbeat age</th><th>in flight / limit</th><th>cpu</th><th>free mem</th><th>processed</th><th>failed</th><th>claim latency</th><th>started</th><th>holds</th></tr></thead>
<tbody>${workers.map((w) => {
        const jobs = held.get(workerKeyOf(w.id) ?? '') ?? [];
        return html`<tr data-worker-pid="${w.pid}" class="${w.heartbeatAgeMs > 3 * w.heartbeatIntervalMs ? 'problem' : ''}">
<td>${w.host}</td><td>${w.pid}</td><td>${w.name}</td><td>${w.queues.join(', ')}</td>
<td class="num">${duration(w.heartbeatAgeMs)}</td>
<td class="num">${w.inFlight} / ${w.concurrencyLimit} (of ${w.concurrency})</td>
<td class="num">${w.cpu === null ? '—' : `${Math.round(w.cpu * 100)}%`}</td>
<td class="num">${w.freeMem === null ? '—' : `${Math.round(w.freeMem * 100)}%`}</td>
<td class="num">${count(w.processed)}</td><td class="num">${count(w.failed)}</td>
<td class="num">${duration(w.claimLatencyMs)}</td>
<td>${when(w.startedAt)}</td>
<td class="held">${jobs.map((j) => html`<a href="${ctx.href(`/jobs/${j.id}`)}">${j.id}</a> `)}</td>
</tr>`;
      })}</tbody></table>`
}
${running.next === null ? '' : html`<p class="hint">Only the first ${RUNNING_SHOWN} running jobs are matched to their workers.</p>`}`;
  return { title: 'Workers', section: 'workers', body };
};
