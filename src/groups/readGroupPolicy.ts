import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue, ?2 group, ?3 queue. The group's own concurrency limit (NULL: none, or no row),
 * its queue's default group concurrency and its fair window (NULL: not set). Primary-key probes, no
 * lock: a limit set while this enqueue runs applies to the jobs enqueued after it.
 */
const sqlPolicy = (t: Tables) => `
SELECT (SELECT concurrency_limit FROM ${t.jobGroups} WHERE queue = ? AND group_key = ?) AS own,
       q.group_concurrency, q.fair_window
FROM (SELECT 1 AS one) AS probe
LEFT JOIN ${t.queues} q ON q.queue = ?`;

/**
 * How a group's jobs are counted: `limit` — a concurrency limit (its own, or the queue's
 * groupConcurrency), exact, settled in the transaction that ends each job; `fair` — only the fair
 * queue's window, a soft bound settled lazily after the commit; null — neither: the jobs go through
 * no group table at all.
 */
export type GroupPolicy = 'limit' | 'fair' | null;

/** The policy of this group of this queue (one statement). */
export async function readGroupPolicy(
  db: Executor,
  tables: Tables,
  queue: string,
  group: string,
): Promise<GroupPolicy> {
  const [row] = await db.select<{ own: number | null; group_concurrency: number | null; fair_window: number | null }>(
    sqlPolicy(tables),
    [queue, group, queue],
  );
  if (row === undefined) return null;
  if (row.own !== null || row.group_concurrency !== null) return 'limit';
  return row.fair_window !== null ? 'fair' : null;
}
