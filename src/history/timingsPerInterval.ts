import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { NAME_PATTERN } from '../model/validateJob.ts';
import { integerIn } from '../options.ts';

/** Histogram steps per doubling of a duration: a quantile is read to within 2^(1/8) − 1 (9 %). */
const STEPS_PER_OCTAVE = 4;

/**
 * One bounded read of the history, newest first, stopped by its LIMIT (as finishedPerInterval's):
 * the last `cap` entries of ix_finished in the window, grouped per bucket (`ago`, newest 0). The
 * queue's rows (`mine`) are grouped by job name and by the histogram steps of their run time
 * (started_at → finished_at) and their wait (created_at → started_at), completed jobs only; other
 * queues' rows only counted, for `capped`. Beside it (`mine` 2), the queue's dead jobs per bucket,
 * a range of dead_jobs' ix_queue_failed as bounded. Rows out: at most one per entry read, far
 * fewer as a rule.
 *
 * Params: ?bucket seconds, ?queue × 4, ?window seconds, ?cap; then ?bucket seconds, ?queue,
 * ?window seconds, ?cap for the dead jobs.
 */
const sqlTimings = (t: Tables) => `
SELECT x.ago, x.mine, x.name, x.run_step, x.wait_step, COUNT(*) AS n
FROM (
  SELECT TIMESTAMPDIFF(SECOND, finished_at, NOW(3)) DIV ? AS ago,
         queue = ? AS mine,
         IF(queue = ?, name, NULL) AS name,
         IF(queue = ? AND outcome = 'completed' AND started_at IS NOT NULL,
            FLOOR(LOG2(GREATEST(TIMESTAMPDIFF(MICROSECOND, started_at, finished_at), 1000) / 1000) * ${STEPS_PER_OCTAVE}),
            NULL) AS run_step,
         IF(queue = ? AND outcome = 'completed' AND started_at IS NOT NULL,
            FLOOR(LOG2(GREATEST(TIMESTAMPDIFF(MICROSECOND, created_at, started_at), 1000) / 1000) * ${STEPS_PER_OCTAVE}),
            NULL) AS wait_step
  FROM ${t.jobHistory} FORCE INDEX (ix_finished)
  WHERE finished_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY finished_at DESC
  LIMIT ?
) x
GROUP BY x.ago, x.mine, x.name, x.run_step, x.wait_step
UNION ALL
SELECT TIMESTAMPDIFF(SECOND, d.failed_at, NOW(3)) DIV ? AS ago, 2, NULL, NULL, NULL, COUNT(*)
FROM (
  SELECT failed_at
  FROM ${t.deadJobs} FORCE INDEX (ix_queue_failed)
  WHERE queue = ?
    AND failed_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY queue DESC, failed_at DESC
  LIMIT ?
) d
GROUP BY ago`;

/** p50 and p95 per bucket, oldest first, in ms; null where the bucket has no completed job. */
export interface Quantiles {
  readonly p50: (number | null)[];
  readonly p95: (number | null)[];
}

export interface Timings {
  readonly bucketSeconds: number;
  /**
   * Jobs of the queue finished (completed or cancelled) per bucket, oldest first, per job name:
   * the `names` most frequent over the window, then every other name summed (`name` null).
   */
  readonly byName: { readonly name: string | null; readonly finished: number[] }[];
  /** Jobs of the queue finished per bucket, every name (the sum of byName's). */
  readonly finished: number[];
  /** Jobs of the queue that died per bucket. */
  readonly died: number[];
  /** Run time (claim of the last attempt → finish) of its completed jobs, or of `name`'s. */
  readonly runMs: Quantiles;
  /** Enqueue → claim of the last attempt (delays and retries included) of the same jobs. */
  readonly waitMs: Quantiles;
  /** True when a read stopped at `maxRows` entries: the oldest buckets are undercounted. */
  readonly capped: boolean;
}

export interface TimingsOptions {
  readonly queue: string;
  /** Quantiles of this job name's jobs only (byName keeps every name). */
  readonly name?: string;
  readonly bucketSeconds: number;
  readonly buckets: number;
  /** History entries read at most, every queue's counted (the history keeps no index by queue). @defaultValue 20000 */
  readonly maxRows?: number;
  /** Job names given a series of their own in byName. @defaultValue 8 */
  readonly names?: number;
}

interface Row {
  ago: number | string;
  mine: number | string;
  name: string | null;
  run_step: number | string | null;
  wait_step: number | string | null;
  n: number | string;
}

/**
 * A queue's jobs finished (by job name too) and dead per bucket, and its run and wait times'
 * p50/p95 per bucket, in one statement: the history read bounded by `maxRows` entries, the dead
 * jobs by as many. Quantiles come from histograms of
 * quarter-octave steps (each step's geometric middle): within 9 % of the exact value (a duration under 1 ms counts as 1 ms).
 */
export async function timingsPerInterval(db: Executor, tables: Tables, options: TimingsOptions): Promise<Timings> {
  const queue = assertQueueName('queue', options.queue);
  const bucketSeconds = integerIn('bucketSeconds', options.bucketSeconds, 1, 86_400);
  const buckets = integerIn('buckets', options.buckets, 1, 1_000);
  const maxRows = integerIn('maxRows', options.maxRows ?? 20_000, 1, 1_000_000);
  const names = integerIn('names', options.names ?? 8, 1, 100);
  if (options.name !== undefined && (typeof options.name !== 'string' || !NAME_PATTERN.test(options.name)))
    throw new OptionsError('name', `must be a job name matching ${NAME_PATTERN} (got ${JSON.stringify(options.name)})`);
  const window = bucketSeconds * buckets;
  const rows = await db.select<Row>(sqlTimings(tables), [
    bucketSeconds,
    queue,
    queue,
    queue,
    queue,
    window,
    maxRows,
    bucketSeconds,
    queue,
    window,
    maxRows,
  ]);
  const slot = (row: Row) => buckets - 1 - Number(row.ago);
  const inWindow = (r: Row) => slot(r) >= 0 && slot(r) < buckets;
  const history = rows.filter((r) => Number(r.mine) !== 2);
  const dead = rows.filter((r) => Number(r.mine) === 2);
  const sum = (of: Row[]) => of.reduce((n, r) => n + Number(r.n), 0);
  const mine = history.filter((r) => Number(r.mine) === 1 && inWindow(r));
  const perBucket = (of: Row[]) => {
    const out = new Array<number>(buckets).fill(0);
    for (const r of of) if (inWindow(r)) out[slot(r)] = (out[slot(r)] ?? 0) + Number(r.n);
    return out;
  };
  const perName = new Map<string, number[]>();
  for (const r of mine) {
    const name = r.name as string;
    const series = perName.get(name) ?? new Array<number>(buckets).fill(0);
    perName.set(name, series);
    series[slot(r)] = (series[slot(r)] ?? 0) + Number(r.n);
  }
  const total = (s: number[]) => s.reduce((a, b) => a + b, 0);
  const ranked = [...perName].sort((a, b) => total(b[1]) - total(a[1]) || (a[0] < b[0] ? -1 : 1));
  const byName: { name: string | null; finished: number[] }[] = ranked
    .slice(0, names)
    .map(([name, finished]) => ({ name, finished }));
  if (ranked.length > names) {
    const others = new Array<number>(buckets).fill(0);
    for (const [, series] of ranked.slice(names))
      series.forEach((n, i) => {
        others[i] = (others[i] ?? 0) + n;
      });
    byName.push({ name: null, finished: others });
  }
  const timed = mine.filter((r) => r.run_step !== null && (options.name === undefined || r.name === options.name));
  return {
    bucketSeconds,
    byName,
    finished: perBucket(mine),
    died: perBucket(dead),
    runMs: quantiles(timed, buckets, slot, 'run_step'),
    waitMs: quantiles(timed, buckets, slot, 'wait_step'),
    capped: sum(history) >= maxRows || sum(dead) >= maxRows,
  };
}

function quantiles(rows: Row[], buckets: number, slot: (r: Row) => number, step: 'run_step' | 'wait_step'): Quantiles {
  const histograms = Array.from({ length: buckets }, () => new Map<number, number>());
  for (const r of rows) {
    const h = histograms[slot(r)] as Map<number, number>;
    const s = Number(r[step]);
    h.set(s, (h.get(s) ?? 0) + Number(r.n));
  }
  const at = (h: Map<number, number>, q: number): number | null => {
    const steps = [...h].sort((a, b) => a[0] - b[0]);
    const count = steps.reduce((sum, [, n]) => sum + n, 0);
    if (count === 0) return null;
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (const [s, n] of steps) {
      seen += n;
      // The step [2^(s/k), 2^((s+1)/k)) ms, read at its geometric middle.
      if (seen >= rank) return Math.round(2 ** ((s + 0.5) / STEPS_PER_OCTAVE) * 10) / 10;
    }
    return null;
  };
  return { p50: histograms.map((h) => at(h, 0.5)), p95: histograms.map((h) => at(h, 0.95)) };
}
