import { setTimeout as sleep } from 'node:timers/promises';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { integerIn } from '../options.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import { expireIdempotencyKeys } from './expireIdempotencyKeys.ts';

/**
 * Params: ?1 batch size. Locks one bounded batch of keys whose retention ended, oldest first
 * (ix_expires), skipping rows another transaction holds (an enqueue taking an expired key over,
 * in the application's own long transaction). Returns their primary keys.
 */
const sqlLockExpired = (t: Tables) => `
SELECT queue, idempotency_key
FROM ${t.idempotencyKeys}
WHERE expires_at < NOW(3)
ORDER BY expires_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 (queue, key) pairs (list, locked). affectedRows = keys freed. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.idempotencyKeys}
WHERE (queue, idempotency_key) IN (?)`;

/** Params: ?1 after job id, ?2 limit. Live keys (no expiry yet), in job id order (ix_expires). */
const sqlLiveKeys = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE expires_at IS NULL
  AND job_id > ?
ORDER BY job_id
LIMIT ?`;

/** Params: ?1 ids (list). Which of those jobs are still live. */
const sqlLiveJobs = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)`;

export interface PruneIdempotencyKeysOptions {
  /** How long a finished job's key keeps refusing duplicates (an install option). */
  readonly retentionMs: number;
  readonly batchSize: number;
}

/**
 * Idempotency-key retention, one bounded step per maintenance pass:
 * 1. orphans: keys still marked live whose job is gone (the worker's expiry write was lost) get
 *    their retention clock started — scanning one page per pass from a cursor that wraps;
 * 2. expired keys are deleted in small batches, freeing them for new jobs: each a short
 *    transaction (lock with SKIP LOCKED, delete by primary key; re-run whole by withTransaction
 *    after a transient conflict) that never waits on a key someone else holds.
 * The orphan statements are autocommit, re-run by the Executor after a transient conflict.
 */
export function pruneIdempotencyKeys(
  { db, tables }: TaskDb,
  options: PruneIdempotencyKeysOptions,
): MaintenanceTask<'pruneIdempotencyKeys', 'orphansExpired' | 'pruned', PruneIdempotencyKeysOptions> {
  integerIn('idempotencyRetentionMs', options.retentionMs, 1);
  integerIn('batchSize', options.batchSize, 1, 10_000);
  let cursor = 0;
  return {
    name: 'pruneIdempotencyKeys',
    options,
    async runOnce() {
      const live = (await db.select<{ job_id: number }>(sqlLiveKeys(tables), [cursor, options.batchSize])).map((r) =>
        Number(r.job_id),
      );
      let orphansExpired = 0;
      if (live.length > 0) {
        const still = new Set((await db.select<{ id: number }>(sqlLiveJobs(tables), [live])).map((r) => Number(r.id)));
        const orphans = live.filter((id) => !still.has(id));
        await expireIdempotencyKeys(db, tables, orphans, options.retentionMs);
        orphansExpired = orphans.length;
      }
      cursor = live.length < options.batchSize ? 0 : (live[live.length - 1] as number);
      let pruned = 0;
      for (;;) {
        const { locked, removed } = await withTransaction(db, async (tx) => {
          const keys = await tx.select<{ queue: string; idempotency_key: string }>(sqlLockExpired(tables), [
            options.batchSize,
          ]);
          if (keys.length === 0) return { locked: 0, removed: 0 };
          const pairs = keys.map((k) => [k.queue, k.idempotency_key]);
          return { locked: keys.length, removed: (await tx.write(sqlDelete(tables), [pairs])).affectedRows };
        });
        pruned += removed;
        if (locked < options.batchSize) break;
        await sleep(Math.random() * 20);
      }
      return { orphansExpired, pruned };
    },
  };
}
