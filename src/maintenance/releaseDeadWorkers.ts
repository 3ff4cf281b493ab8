import type { Executor } from '../db/executor.ts';
import { retryTransient } from '../db/transaction.ts';
import type { Tables } from '../db/tables.ts';
import { canPrefixLockId } from '../worker/claimToken.ts';
import { liveQueues } from './liveQueues.ts';

/**
 * Params: missed heartbeats (×1000), limit. Workers whose last heartbeat is older than that many
 * of their own heartbeat intervals. The registry holds one row per worker: a scan is cheap.
 */
const sqlStaleWorkers = (t: Tables) => `
SELECT id
FROM ${t.workers}
WHERE heartbeat_at < NOW(3) - INTERVAL (heartbeat_interval_ms * ?) MICROSECOND
ORDER BY heartbeat_at
LIMIT ?`;

/**
 * Params: queue, lock_id LIKE pattern, limit. The claims a worker holds in one queue: every
 * lock_id it writes starts with its id, so this is one ix_head range (queue, lock_id prefix)
 * holding exactly those claims. Forced, as in releaseStaleClaims.
 */
const sqlClaimsOf = (t: Tables) => `
SELECT id
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?
  AND lock_id LIKE ?
LIMIT ?`;

/**
 * Params: ids (list), lock_id LIKE pattern, worker id, missed heartbeats (×1000). Releases those
 * claims if the dead worker still holds them (fenced by its lock_id prefix) and is still stale
 * (checked in the statement itself, once: a worker that resumed after the check keeps its
 * claims), bumping retry_times: its attempts count as failed.
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs}
SET last_error = CONCAT('worker of claim ', lock_id, ' stopped heartbeating (died or stalled)'),
    lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1
WHERE id IN (?)
  AND lock_id LIKE ?
  AND EXISTS (
    SELECT 1 FROM ${t.workers} w
    WHERE w.id = ?
      AND w.heartbeat_at < NOW(3) - INTERVAL (w.heartbeat_interval_ms * ?) MICROSECOND)`;

/** Params: id, missed heartbeats (×1000). Removes a dead worker's row if it is still stale. */
const sqlRemoveWorker = (t: Tables) => `
DELETE FROM ${t.workers}
WHERE id = ?
  AND heartbeat_at < NOW(3) - INTERVAL (heartbeat_interval_ms * ?) MICROSECOND`;

/**
 * The fast recovery path: a worker that missed `missedHeartbeats` of its heartbeats is dead; its
 * claims go back to the queue at once instead of after the (much longer) lock timeout. Returns the
 * workers removed, the claims released and the jobs' ids (for dead-lettering exhausted ones).
 */
export async function releaseDeadWorkers(
  db: Executor,
  tables: Tables,
  options: { missedHeartbeats: number; batchSize: number },
): Promise<{ workers: string[]; released: number; ids: number[] }> {
  const staleUs = Math.round(options.missedHeartbeats * 1000);
  const dead = (await db.select<{ id: string }>(sqlStaleWorkers(tables), [staleUs, options.batchSize])).map((r) => r.id);
  let released = 0;
  const ids: number[] = [];
  const removed: string[] = [];
  const queues = dead.length > 0 ? await liveQueues(db, tables) : [];
  for (const workerId of dead) {
    const pattern = `${escapeLike(workerId)}.%`;
    let resumed = false;
    // lock_id is ASCII: a worker id that is not (registered by a sluice before the fixed-width
    // claim, on a host with such a name) holds no claim, and comparing it would be an error.
    for (const queue of canPrefixLockId(workerId) ? queues : []) {
      while (!resumed) {
        const claims = (await db.select<{ id: number }>(sqlClaimsOf(tables), [queue, pattern, options.batchSize])).map((r) => Number(r.id));
        if (claims.length === 0) break;
        const { affectedRows } = await retryTransient(() => db.write(sqlRelease(tables), [claims, pattern, workerId, staleUs]));
        // Nothing released although its claims are there: the worker heartbeated since it was found.
        resumed = affectedRows === 0;
        released += affectedRows;
        if (!resumed) ids.push(...claims);
        if (claims.length < options.batchSize) break;
      }
    }
    if (!resumed && (await db.write(sqlRemoveWorker(tables), [workerId, staleUs])).affectedRows > 0) removed.push(workerId);
  }
  return { workers: removed, released, ids };
}

/** Pure: a LIKE pattern that matches `text` literally. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
