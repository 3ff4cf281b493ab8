import type { Executor } from '../../db/executor.ts';
import { idSet } from '../../db/idSet.ts';
import type { Tables } from '../../db/tables.ts';
import type { ClaimedRow } from './claimedRow.ts';
import { loadClaimedJobs } from './loadClaimedJobs.ts';

/**
 * Params: ?1 queue, ?2 priorities (list: the queue's distinct free priorities), ?3 headSize (with
 * `skip`: ?3 rows skipped, ?4 headSize). Returns the ids (and priorities) at the head of the queue:
 * free, due, in priority / run_at / id order. A plain (non-locking) read of one bounded ix_head
 * range per priority, without filesort: rows not yet due are never walked.
 */
export const sqlHead = (t: Tables, skip = false) => `
SELECT id, priority
FROM ${t.jobs}
WHERE queue = ?
  AND lock_id = ''
  AND priority IN (?)
  AND run_at <= NOW(3)
ORDER BY priority, run_at, id
LIMIT ${skip ? '?, ?' : '?'}`;

/**
 * Params: ?1 lockId, then the idSet of the picked ids (all of queue ?3), then ?3 queue. Claims whichever of those rows
 * are still free and due, by primary key, unless the queue's row refuses (QUEUE_GATE). affectedRows =
 * rows claimed. Two workers that picked the same id: one gets it. The gate names the queue rather
 * than each row's, so the server runs it once per statement, not once per row.
 */
const sqlClaim = (t: Tables, ids: string) => `
UPDATE ${t.jobs}
SET lock_id = ?,
    locked_at = NOW(3),
    claimed_at = NOW(3)
WHERE ${ids}
  AND lock_id = ''
  AND run_at <= NOW(3)
  AND ${queueGate(t)}`;

/**
 * The claim statements' check of the queue's row: one primary-key read per statement, as the pause
 * check alone was. It refuses a paused queue (by an operator, or until paused_until) and a limited
 * one: a limited queue is claimed by claimWithinLimits, which the worker switches to when this
 * refuses it (readQueueGate). Param: the queue.
 */
export const queueGate = (t: Tables) =>
  `NOT EXISTS (SELECT 1 FROM ${t.queues} q WHERE q.queue = ? AND (q.paused_at IS NOT NULL OR q.paused_until > NOW(3) OR q.concurrency_cap IS NOT NULL OR q.rate_limit IS NOT NULL))`;

export interface ClaimRequest {
  readonly queue: string;
  /** The queue's distinct priorities among free jobs (QueuePriorities). */
  readonly priorities: readonly number[];
  readonly want: number;
  readonly lockId: string;
  readonly headSize: number;
  /**
   * Set to true by a claim that found due jobs and claimed none of them: another worker won them,
   * or the queue's row refused (paused, or limited: then readQueueGate says which).
   */
  readonly refused?: { value: boolean };
}

/**
 * The default claim (docs/how-it-works.md): read a head of candidates without locks, pick `want`
 * distinct ones at random, claim them optimistically, load what we won. No transaction, no
 * locking read: contention costs a wasted round trip, never a double claim. Three autocommit
 * statements, each re-run by the Executor after a transient conflict.
 */
export async function claimRandomHead(db: Executor, tables: Tables, req: ClaimRequest): Promise<ClaimedRow[]> {
  if (req.priorities.length === 0) return [];
  const head = await db.select<{ id: number; priority: number }>(sqlHead(tables), [
    req.queue,
    req.priorities,
    Math.max(req.headSize, req.want),
  ]);
  if (head.length === 0) return [];
  const picked = pickFromHead(head, req.want);
  const ids = idSet('id', picked);
  const { affectedRows } = await db.write(sqlClaim(tables, ids.sql), [req.lockId, ...ids.params, req.queue]);
  if (affectedRows === 0) {
    if (req.refused) req.refused.value = true;
    return [];
  }
  return loadClaimedJobs(db, tables, req.queue, req.lockId);
}

/**
 * Pure: `want` ids from a head in priority order, at random but never passing over a better
 * priority: every row of a priority better than the want-th row's is taken, and the rest are
 * drawn at random from the want-th row's priority only. (A random pick across the whole head
 * would run a priority-10 job before a priority-0 one whenever both fit in one head.)
 */
export function pickFromHead(head: readonly { id: number; priority: number }[], want: number): number[] {
  if (want >= head.length) return head.map((r) => Number(r.id));
  const cutoff = (head[want - 1] as { priority: number }).priority;
  const better = head.filter((r) => r.priority < cutoff).map((r) => Number(r.id));
  const tier = head.filter((r) => r.priority === cutoff).map((r) => Number(r.id));
  return [...better, ...pickRandom(tier, want - better.length)];
}

/** Pure: `count` distinct elements of `ids`, uniformly at random (partial Fisher–Yates). */
export function pickRandom(ids: number[], count: number): number[] {
  if (count >= ids.length) return ids;
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(Math.random() * (ids.length - i));
    const tmp = ids[i] as number;
    ids[i] = ids[j] as number;
    ids[j] = tmp;
  }
  return ids.slice(0, count);
}
