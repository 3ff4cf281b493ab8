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
 * Params: ?1 queue. The queue's default group concurrency and fair window (NULL: not set, or no row).
 */
const sqlQueuePolicy = (t: Tables) => `
SELECT q.group_concurrency, q.fair_window
FROM (SELECT 1 AS one) AS probe
LEFT JOIN ${t.queues} q ON q.queue = ?`;

/**
 * Params: ?1 queue, ?2 groups (list). Those of the groups with a concurrency limit of their own:
 * primary-key probes, no lock.
 */
const sqlOwnLimits = (t: Tables) => `
SELECT group_key
FROM ${t.jobGroups}
WHERE queue = ?
  AND group_key IN (?)
  AND concurrency_limit IS NOT NULL`;

/** Groups one read of their own limits names at most. */
const GROUPS_PER_READ = 500;

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

/**
 * readGroupPolicy for many groups of one queue: one read of the queue's row, then — unless its
 * default group concurrency already limits them all — one read of their own limits per
 * GROUPS_PER_READ groups. A batch of jobs of 100,000 new groups costs 201 statements, not 100,000.
 */
export async function readGroupPolicies(
  db: Executor,
  tables: Tables,
  queue: string,
  groups: readonly string[],
): Promise<Map<string, GroupPolicy>> {
  const [row] = await db.select<{ group_concurrency: number | null; fair_window: number | null }>(
    sqlQueuePolicy(tables),
    [queue],
  );
  const byQueue: GroupPolicy = row?.group_concurrency != null ? 'limit' : row?.fair_window != null ? 'fair' : null;
  const policies = new Map<string, GroupPolicy>(groups.map((group) => [group, byQueue]));
  if (byQueue === 'limit') return policies;
  for (let i = 0; i < groups.length; i += GROUPS_PER_READ) {
    const own = await db.select<{ group_key: string }>(sqlOwnLimits(tables), [
      queue,
      groups.slice(i, i + GROUPS_PER_READ),
    ]);
    for (const r of own) policies.set(r.group_key, 'limit');
  }
  return policies;
}
