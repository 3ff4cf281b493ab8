import type { WorkerMetrics } from '../worker/metricsSnapshot.ts';
import { ATTEMPT_DURATION_BUCKETS_S, START_LATENCY_BUCKETS_S } from '../worker/metricsSnapshot.ts';
import { count, duration } from './format.ts';
import { html } from './html.ts';

/** The counts of one job name, or of a whole queue, summed over the live workers. */
interface Summed {
  claimed: number;
  completed: number;
  failed: number;
  dead: number;
  duration: number[];
}

/** Pure: the index of the bucket a histogram's q-quantile falls in, or null with no observation. */
function quantileBucket(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((n, b) => n + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    seen += buckets[i] ?? 0;
    if (seen >= q * total) return i;
  }
  return buckets.length - 1;
}

/**
 * Pure: a histogram's q-quantile as the upper bound (ms) of the bucket it falls in — what a
 * histogram can say: "at most" — or null with no observation; past the last bound, the last bound.
 */
export function quantileMs(buckets: readonly number[], bounds: readonly number[], q: number): number | null {
  const i = quantileBucket(buckets, q);
  return i === null ? null : (bounds[Math.min(i, bounds.length - 1)] as number) * 1000;
}

function add(into: number[], from: readonly number[]): void {
  from.forEach((n, i) => {
    into[i] = (into[i] ?? 0) + n;
  });
}

/** "≤ 500 ms", or "> 15 min" when the quantile is past the last bound; "—" with no observation. */
const atMost = (buckets: readonly number[], bounds: readonly number[], q: number) => {
  const i = quantileBucket(buckets, q);
  if (i === null) return '—';
  return i < bounds.length
    ? `≤ ${duration((bounds[i] as number) * 1000)}`
    : `> ${duration((bounds[bounds.length - 1] as number) * 1000)}`;
};

/**
 * A queue's wait (due to claimed) and run time (claim to outcome) as its live workers recorded them
 * since they started (their registry rows' metrics: sluice.workers.list({ metrics: true })), p50 and
 * p95 per job name from the summed histograms, with attempts and outcomes.
 */
export function queueTimings(queue: string, metrics: readonly (WorkerMetrics | null)[]) {
  const names = new Map<string, Summed>();
  const wait: number[] = [];
  for (const m of metrics) {
    const q = m?.queues[queue];
    if (!q) continue;
    add(wait, q.startLatency.buckets);
    for (const [name, n] of Object.entries(q.names)) {
      const s = names.get(name) ?? { claimed: 0, completed: 0, failed: 0, dead: 0, duration: [] };
      s.claimed += n.claimed;
      s.completed += n.completed;
      s.failed += n.failed;
      s.dead += n.dead;
      add(s.duration, n.attemptDuration.buckets);
      names.set(name, s);
    }
  }
  if (names.size === 0 && wait.length === 0)
    return html`<p class="empty">No live worker has claimed a job of this queue yet.</p>`;
  const rows = [...names].sort(([a], [b]) => (a < b ? -1 : 1));
  return html`<p>Wait (due to claimed), p50 ${atMost(wait, START_LATENCY_BUCKETS_S, 0.5)}, p95 ${atMost(wait, START_LATENCY_BUCKETS_S, 0.95)}: as the live workers recorded it since they started (histogram buckets: "≤ 50 ms" means in the bucket up to 50 ms).</p>
<table class="timings">
<thead><tr><th>job name</th><th>attempts</th><th>completed</th><th>failed</th><th>dead</th><th>run time p50</th><th>run time p95</th></tr></thead>
<tbody>${rows.map(
    ([name, s]) =>
      html`<tr data-job-name="${name}"><td>${name}</td><td class="num">${count(s.claimed)}</td><td class="num">${count(s.completed)}</td><td class="num">${count(s.failed)}</td><td class="num">${count(s.dead)}</td><td class="num" data-p50>${atMost(s.duration, ATTEMPT_DURATION_BUCKETS_S, 0.5)}</td><td class="num" data-p95>${atMost(s.duration, ATTEMPT_DURATION_BUCKETS_S, 0.95)}</td></tr>`,
  )}</tbody>
</table>`;
}
