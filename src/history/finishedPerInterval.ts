import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn } from '../options.ts';

/**
 * One bounded read per table, newest first, stopped by its LIMIT: jobs finished (completed or
 * cancelled: `f`, history's ix_finished) and jobs that died (`d`, dead_jobs' ix_failed) per bucket
 * over the window, newest bucket 0, on the DB clock, in one statement. Per bucket `n` counts the
 * rows of the queue asked for (every row when none) and `examined` the entries read: a busy window
 * costs at most `cap` entries each, and the oldest buckets then come back short (`capped`). The
 * history keeps no index by queue (a completion writes it: src/worker/claims/completeJobs.ts), so
 * one queue's finished jobs are found among every queue's, by primary key, within the same cap;
 * its dead ones are a range of ix_queue_failed.
 *
 * Params: per table, ?bucket seconds, [?queue for `n`,] [?queue for the range,] ?window seconds,
 * ?cap — the queue for `n` on the history's read, for the range on the dead jobs' read.
 */
const sqlPerBucket = (t: Tables, byQueue: boolean) => `
SELECT 'f' AS kind, TIMESTAMPDIFF(SECOND, x.at, NOW(3)) DIV ? AS ago, ${byQueue ? 'SUM(x.queue = ?)' : 'COUNT(*)'} AS n,
       COUNT(*) AS examined
FROM (
  SELECT finished_at AS at${byQueue ? ', queue' : ''}
  FROM ${t.jobHistory} FORCE INDEX (ix_finished)
  WHERE finished_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY finished_at DESC
  LIMIT ?
) x
GROUP BY ago
UNION ALL
SELECT 'd' AS kind, TIMESTAMPDIFF(SECOND, x.at, NOW(3)) DIV ? AS ago, COUNT(*) AS n, COUNT(*) AS examined
FROM (
  SELECT failed_at AS at
  FROM ${t.deadJobs} FORCE INDEX (${byQueue ? 'ix_queue_failed' : 'ix_failed'})
  WHERE ${byQueue ? 'queue = ? AND ' : ''}failed_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY ${byQueue ? 'queue DESC, ' : ''}failed_at DESC
  LIMIT ?
) x
GROUP BY ago`;

export interface Throughput {
  readonly bucketSeconds: number;
  /** Oldest first: bucket i ends (buckets.length - 1 - i) buckets before the DB's now. */
  readonly finished: number[];
  readonly died: number[];
  /** True when a read reached its cap: the oldest buckets are undercounted. */
  readonly capped: boolean;
}

/**
 * What finished (history: completed and cancelled) and what died per bucket over the last
 * `buckets` buckets of `bucketSeconds` — of every queue, or of `queue` — each read bounded by
 * `maxRows` index entries.
 */
export async function finishedPerInterval(
  db: Executor,
  tables: Tables,
  options: { bucketSeconds: number; buckets: number; maxRows?: number; queue?: string },
): Promise<Throughput> {
  const bucketSeconds = integerIn('bucketSeconds', options.bucketSeconds, 1, 86_400);
  const buckets = integerIn('buckets', options.buckets, 1, 1_000);
  const maxRows = integerIn('maxRows', options.maxRows ?? 200_000, 1, 10_000_000);
  const queue = options.queue === undefined ? undefined : assertQueueName('queue', options.queue);
  const window = bucketSeconds * buckets;
  const named = queue === undefined ? [] : [queue];
  const rows = await db.select<{
    kind: 'f' | 'd';
    ago: number | string;
    n: number | string;
    examined: number | string;
  }>(sqlPerBucket(tables, queue !== undefined), [
    bucketSeconds,
    ...named,
    window,
    maxRows,
    bucketSeconds,
    ...named,
    window,
    maxRows,
  ]);
  const finished = rows.filter((r) => r.kind === 'f');
  const died = rows.filter((r) => r.kind === 'd');
  const series = (rows: { ago: number | string; n: number | string }[]) => {
    const out = new Array<number>(buckets).fill(0);
    for (const row of rows) {
      const ago = Number(row.ago);
      if (ago >= 0 && ago < buckets) out[buckets - 1 - ago] = Number(row.n);
    }
    return out;
  };
  const total = (rows: { examined: number | string }[]) => rows.reduce((sum, r) => sum + Number(r.examined), 0);
  return {
    bucketSeconds,
    finished: series(finished),
    died: series(died),
    capped: total(finished) >= maxRows || total(died) >= maxRows,
  };
}
