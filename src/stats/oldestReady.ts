import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { BELOW_SMALLINT, nextFreePriority } from '../queues/nextFreePriority.ts';

/**
 * Params: ?1 queue, ?2 priority. How long the oldest due free job of one priority has waited, in
 * ms on the DB clock (NULL when none is due): one seek into ix_head (queue, lock_id, priority,
 * run_at), answered from the index alone whatever the backlog.
 */
const sqlOldestOfPriority = (t: Tables) => `
SELECT TIMESTAMPDIFF(MICROSECOND, MIN(run_at), NOW(3)) DIV 1000 AS age_ms
FROM ${t.jobs}
WHERE queue = ?
  AND lock_id = ''
  AND priority = ?
  AND run_at <= NOW(3)`;

/**
 * The age of the oldest ready (free, due) job of a queue, or null when none is ready: one seek
 * per distinct free priority (at most `maxPriorities`; queues rarely use more than a handful).
 * Unlike stats(), whose one pass reads the whole live table, this stays bounded on millions of rows.
 */
export async function oldestReadyMs(
  db: Executor,
  tables: Tables,
  queue: string,
  maxPriorities = 32,
): Promise<number | null> {
  let oldest: number | null = null;
  let priority = await nextFreePriority(db, tables, queue, BELOW_SMALLINT);
  for (let seen = 0; priority !== null && seen < maxPriorities; seen++) {
    const [row] = await db.select<{ age_ms: number | string | null }>(sqlOldestOfPriority(tables), [queue, priority]);
    if (row?.age_ms !== null && row?.age_ms !== undefined) oldest = Math.max(oldest ?? 0, Number(row.age_ms));
    priority = await nextFreePriority(db, tables, queue, priority);
  }
  return oldest;
}
