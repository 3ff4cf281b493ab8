import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Below every SMALLINT priority: the first seek's lower bound. */
export const BELOW_SMALLINT = -32769;

/**
 * Params: ?1 queue, ?2 lower bound (exclusive). The next priority value among the queue's free
 * jobs: a single seek into ix_head (queue, lock_id, priority, …) answered from the index alone,
 * whatever the backlog.
 */
const sqlNextPriority = (t: Tables) => `
SELECT MIN(priority) AS priority
FROM ${t.jobs}
WHERE queue = ?
  AND lock_id = ''
  AND priority > ?`;

/**
 * The next priority value above `after` among the queue's free (unclaimed) jobs, or null. MySQL
 * and MariaDB have no loose index scan, so the distinct priorities of a queue are found one such
 * seek at a time: the claimer's head (worker/QueuePriorities) and job listings (jobs/jobPlans)
 * both walk them this way.
 */
export async function nextFreePriority(db: Executor, t: Tables, queue: string, after: number): Promise<number | null> {
  const [row] = await db.select<{ priority: number | null }>(sqlNextPriority(t), [queue, after]);
  return row?.priority ?? null;
}
