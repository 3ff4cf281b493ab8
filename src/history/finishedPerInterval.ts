import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';

/**
 * Params: ?1 bucket seconds, ?2 window seconds, ?3 row cap, then the same three again. Jobs
 * finished (completed or cancelled: `f`) and jobs that died (`d`) per bucket over the window,
 * newest bucket 0, on the DB clock, in one statement. Each inner read is one covering range —
 * of history's ix_finished, of dead_jobs' ix_failed — newest first, stopped by its LIMIT: a busy
 * window costs at most `cap` index entries each, and the oldest buckets then come back short
 * (`capped`).
 */
const sqlPerBucket = (t: Tables) =>
  [
    ['f', t.jobHistory, 'finished_at'],
    ['d', t.deadJobs, 'failed_at'],
  ]
    .map(
      ([kind, table, at]) => `
SELECT '${kind}' AS kind, TIMESTAMPDIFF(SECOND, x.at, NOW(3)) DIV ? AS ago, COUNT(*) AS n
FROM (
  SELECT ${at} AS at
  FROM ${table}
  WHERE ${at} > NOW(3) - INTERVAL ? SECOND
  ORDER BY ${at} DESC
  LIMIT ?
) x
GROUP BY ago`,
    )
    .join('\nUNION ALL');

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
 * `buckets` buckets of `bucketSeconds`, each read bounded by `maxRows` index entries.
 */
export async function finishedPerInterval(
  db: Executor,
  tables: Tables,
  options: { bucketSeconds: number; buckets: number; maxRows?: number },
): Promise<Throughput> {
  const bucketSeconds = integerIn('bucketSeconds', options.bucketSeconds, 1, 86_400);
  const buckets = integerIn('buckets', options.buckets, 1, 1_000);
  const maxRows = integerIn('maxRows', options.maxRows ?? 200_000, 1, 10_000_000);
  const params = [bucketSeconds, bucketSeconds * buckets, maxRows];
  const rows = await db.select<{ kind: 'f' | 'd'; ago: number | string; n: number | string }>(sqlPerBucket(tables), [
    ...params,
    ...params,
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
  const total = (rows: { n: number | string }[]) => rows.reduce((sum, r) => sum + Number(r.n), 0);
  return {
    bucketSeconds,
    finished: series(finished),
    died: series(died),
    capped: total(finished) >= maxRows || total(died) >= maxRows,
  };
}
