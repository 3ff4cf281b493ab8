import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import { retryTransient } from '../db/transaction.ts';
import type { Tables } from '../db/tables.ts';
import { liveQueues } from './liveQueues.ts';

/**
 * Params: ?1 queue, ?2 lock timeout in microseconds, ?3 batch size. Returns ids of the queue's
 * claims older than the timeout. Walks ix_head's claimed range of the queue (lock_id <> ''): the
 * jobs in flight, never the free or delayed backlog. The index is forced: on a small or skewed
 * table the optimizer may prefer ux_idempotency's `queue` prefix, which walks the whole queue.
 */
const sqlFindStale = (t: Tables) => `
SELECT id
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?
  AND lock_id > ''
  AND locked_at < NOW(3) - INTERVAL ? MICROSECOND
LIMIT ?`;

/**
 * Params: ?1 lock timeout in microseconds, ?2 ids (list), ?3 lock timeout in microseconds.
 * Releases those claims that are still claimed and stale (a heartbeat in between keeps a claim;
 * a job its worker retried or released in between is free, and its locked_at is the old no-claim
 * time, so `lock_id > ''` is what leaves it alone), bumping retry_times: the claim's attempt
 * counts as failed. affectedRows = claims released.
 */
const sqlReleaseStale = (t: Tables) => `
UPDATE ${t.jobs}
SET last_error = CONCAT('claim ', lock_id, ' expired after ', ? DIV 1000, ' ms without a heartbeat (worker died or stalled)'),
    lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1
WHERE id IN (?)
  AND lock_id > ''
  AND locked_at < NOW(3) - INTERVAL ? MICROSECOND`;

export interface ReleaseStaleClaimsResult {
  readonly released: number;
  readonly ids: number[];
}

/**
 * The sweeper's main pass, queue by queue: bounded batches (find by index, release by primary
 * key, re-checking staleness in the UPDATE itself), looping until a short batch, with a jittered
 * pause between batches. No statement or transaction grows with the backlog.
 */
export async function releaseStaleClaims(
  db: Executor,
  tables: Tables,
  options: { lockTimeoutMs: number; batchSize: number; jitterMs: number },
): Promise<ReleaseStaleClaimsResult> {
  const timeoutUs = options.lockTimeoutMs * 1000;
  const ids: number[] = [];
  let released = 0;
  for (const queue of await liveQueues(db, tables)) {
    for (;;) {
      const stale = (await db.select<{ id: number }>(sqlFindStale(tables), [queue, timeoutUs, options.batchSize])).map((r) => Number(r.id));
      if (stale.length === 0) break;
      const { affectedRows } = await retryTransient(() => db.write(sqlReleaseStale(tables), [timeoutUs, stale, timeoutUs]));
      released += affectedRows;
      ids.push(...stale);
      if (stale.length < options.batchSize) break;
      await sleep(Math.random() * Math.min(options.jitterMs, 100));
    }
  }
  return { released, ids };
}
