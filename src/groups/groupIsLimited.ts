import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue, ?2 group, ?3 queue. The group's own concurrency limit (NULL: none, or no row)
 * and its queue's default for every group — its group concurrency, else its fair window (NULL:
 * neither). Two primary-key probes, no lock: a limit set while this enqueue runs applies to the
 * jobs enqueued after it.
 */
const sqlPolicy = (t: Tables) => `
SELECT (SELECT concurrency_limit FROM ${t.jobGroups} WHERE queue = ? AND group_key = ?) AS own,
       (SELECT COALESCE(group_concurrency, fair_window) FROM ${t.queues} WHERE queue = ?) AS queue_default`;

/**
 * Whether jobs of this group of this queue take slots (a limit of its own, a queue default, or a
 * fair queue) and so go through job_groups; a group with none of these costs its jobs nothing.
 */
export async function groupIsLimited(db: Executor, tables: Tables, queue: string, group: string): Promise<boolean> {
  const [row] = await db.select<{ own: number | null; queue_default: number | null }>(sqlPolicy(tables), [
    queue,
    group,
    queue,
  ]);
  return row !== undefined && (row.own !== null || row.queue_default !== null);
}
