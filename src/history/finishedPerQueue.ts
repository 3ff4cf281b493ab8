import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';

/**
 * Params: ?1 window seconds, ?2 row cap. Jobs finished (completed or cancelled) per queue over the
 * window, on the DB clock: the newest `cap` entries of ix_finished, each joined to its row for the
 * queue (the index does not hold it), so a busy window costs at most `cap` row reads.
 */
const sqlFinishedPerQueue = (t: Tables) => `
SELECT h.queue, COUNT(*) AS n
FROM (
  SELECT job_id
  FROM ${t.jobHistory}
  WHERE finished_at > NOW(3) - INTERVAL ? SECOND
  ORDER BY finished_at DESC
  LIMIT ?
) x
JOIN ${t.jobHistory} h ON h.job_id = x.job_id
GROUP BY h.queue`;

/**
 * How many jobs of each queue finished in the last `windowSeconds`, and whether the read stopped
 * at `maxRows` (then the counts are of the newest `maxRows` finishes: a lower bound).
 */
export async function finishedPerQueue(
  db: Executor,
  tables: Tables,
  options: { windowSeconds: number; maxRows?: number },
): Promise<{ counts: Map<string, number>; capped: boolean }> {
  const windowSeconds = integerIn('windowSeconds', options.windowSeconds, 1, 86_400 * 31);
  const maxRows = integerIn('maxRows', options.maxRows ?? 20_000, 1, 1_000_000);
  const rows = await db.select<{ queue: string; n: number | string }>(sqlFinishedPerQueue(tables), [
    windowSeconds,
    maxRows,
  ]);
  const counts = new Map(rows.map((r) => [r.queue, Number(r.n)]));
  const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
  return { counts, capped: total >= maxRows };
}
