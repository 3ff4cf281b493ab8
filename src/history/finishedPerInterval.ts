import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';

/**
 * Params: ?1 bucket seconds, ?2 window seconds, ?3 row cap. Jobs finished (completed or
 * cancelled) per bucket over the window, newest bucket 0, on the DB clock. The inner read is one
 * covering range of ix_finished, newest first, stopped by the LIMIT: a busy window costs at most
 * `cap` index entries, and the oldest buckets then come back short (`capped`).
 */
const sqlFinished = (t: Tables) => `
SELECT TIMESTAMPDIFF(SECOND, x.at, NOW(3)) DIV ? AS ago, COUNT(*) AS n
FROM (
  SELECT finished_at AS at
  FROM ${t.jobHistory}
  WHERE finished_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY finished_at DESC
  LIMIT ?
) x
GROUP BY ago`;

/** Params: as sqlFinished. Jobs that died per bucket: one covering range of dead_jobs.ix_failed. */
const sqlDied = (t: Tables) => `
SELECT TIMESTAMPDIFF(SECOND, x.at, NOW(3)) DIV ? AS ago, COUNT(*) AS n
FROM (
  SELECT failed_at AS at
  FROM ${t.deadJobs}
  WHERE failed_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY failed_at DESC
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
  const [finished, died] = await Promise.all([
    db.select<{ ago: number | string; n: number | string }>(sqlFinished(tables), params),
    db.select<{ ago: number | string; n: number | string }>(sqlDied(tables), params),
  ]);
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
