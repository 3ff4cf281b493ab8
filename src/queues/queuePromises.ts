import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';

/**
 * Params: ?1 queue, then ?2 start within (ms), ?3 max ready, twice. Sets a queue's promise (NULL:
 * that half of it is not promised), creating its row if it has none. The state it was last judged
 * in stays: the next maintenance pass judges it against the new promise. Idempotent.
 */
const sqlSetPromise = (t: Tables) => `
INSERT INTO ${t.queues} (queue, promise_start_within_ms, promise_max_ready, updated_at)
VALUES (?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE promise_start_within_ms = ?, promise_max_ready = ?, updated_at = NOW(3)`;

/** Params: ?1 queue. Withdraws a queue's promise, and its state with it (no event follows). Idempotent. */
const sqlClearPromise = (t: Tables) => `
UPDATE ${t.queues}
SET promise_start_within_ms = NULL,
    promise_max_ready = NULL,
    promise_broken_at = NULL,
    updated_at = NOW(3)
WHERE queue = ?`;

/**
 * Params: ?1 after queue (exclusive), ?2 limit. A page of the queues with a promise, in name order
 * (the primary key's range), each with its state and how long it has been broken (ms, DB clock).
 */
const sqlPromises = (t: Tables) => `
SELECT queue, promise_start_within_ms, promise_max_ready, promise_broken_at,
       TIMESTAMPDIFF(MICROSECOND, promise_broken_at, NOW(3)) DIV 1000 AS broken_for_ms
FROM ${t.queues}
WHERE queue > ?
  AND (promise_start_within_ms IS NOT NULL OR promise_max_ready IS NOT NULL)
ORDER BY queue
LIMIT ?`;

/**
 * Params: ?1 queue. Marks a promised queue's promise broken, unless it is already. affectedRows 1:
 * this call broke it (report it); 0: it was broken already, or the promise was withdrawn meanwhile.
 */
const sqlMarkBroken = (t: Tables) => `
UPDATE ${t.queues}
SET promise_broken_at = NOW(3)
WHERE queue = ?
  AND promise_broken_at IS NULL
  AND (promise_start_within_ms IS NOT NULL OR promise_max_ready IS NOT NULL)`;

/** Params: ?1 queue. Marks a broken promise kept again. affectedRows 1: this call cleared it (report it); 0: it was not broken. */
const sqlMarkKept = (t: Tables) => `
UPDATE ${t.queues}
SET promise_broken_at = NULL
WHERE queue = ?
  AND promise_broken_at IS NOT NULL`;

/** The most promised queues one read returns (the maintenance pass reads them all, a page at a time). */
export const MAX_PROMISES = 1_000;

/** A queue's latency promise. Each half is optional; null (or absent) promises nothing of it. */
export interface QueuePromise {
  /** A ready job starts within this long: the oldest ready job's wait stays at or below it, in ms. */
  readonly startWithinMs?: number | null;
  /** No more than this many jobs are ready (free and due) at once. */
  readonly maxReady?: number | null;
}

/** A queue's promise, and whether it is kept, as the maintenance leader last judged it. */
export interface QueuePromiseState {
  readonly queue: string;
  readonly startWithinMs: number | null;
  readonly maxReady: number | null;
  /** When the maintenance leader found the promise broken; null while it is kept. */
  readonly brokenAt: Date | null;
  /** How long it has been broken (DB clock), or null while it is kept. */
  readonly brokenForMs: number | null;
}

/** The largest start-within an INT UNSIGNED column holds (about 49 days). */
const MAX_START_WITHIN_MS = 4_294_967_295;
/** The largest ready count promised: the maintenance pass reads one more index entry than this per pass. */
export const MAX_PROMISED_READY = 1_000_000;

/** Sets `queue`'s promise (both halves as given: an absent half is not promised), or withdraws it (null). */
export async function setQueuePromise(
  db: Executor,
  tables: Tables,
  queue: string,
  promise: QueuePromise | null,
): Promise<void> {
  assertQueueName('queue', queue);
  if (promise === null) {
    await db.write(sqlClearPromise(tables), [queue]);
    return;
  }
  const { startWithinMs, maxReady } = validatePromise(promise);
  await db.write(sqlSetPromise(tables), [queue, startWithinMs, maxReady, startWithinMs, maxReady]);
}

/** A page of the queues with a promise (after `after`, at most MAX_PROMISES, in name order), with their state. */
export async function queuePromises(db: Executor, tables: Tables, after = ''): Promise<QueuePromiseState[]> {
  const rows = await db.select<{
    queue: string;
    promise_start_within_ms: number | null;
    promise_max_ready: number | null;
    promise_broken_at: Date | null;
    broken_for_ms: number | string | null;
  }>(sqlPromises(tables), [after, MAX_PROMISES]);
  return rows.map((r) => ({
    queue: r.queue,
    startWithinMs: r.promise_start_within_ms === null ? null : Number(r.promise_start_within_ms),
    maxReady: r.promise_max_ready === null ? null : Number(r.promise_max_ready),
    brokenAt: r.promise_broken_at,
    brokenForMs: r.broken_for_ms === null ? null : Math.max(0, Number(r.broken_for_ms)),
  }));
}

/** Records the promise of `queue` as broken; true if this call changed its state (report it once). */
export async function markPromiseBroken(db: Executor, tables: Tables, queue: string): Promise<boolean> {
  const { affectedRows } = await db.write(sqlMarkBroken(tables), [queue]);
  return affectedRows === 1;
}

/** Records the promise of `queue` as kept; true if this call changed its state (report it once). */
export async function markPromiseKept(db: Executor, tables: Tables, queue: string): Promise<boolean> {
  const { affectedRows } = await db.write(sqlMarkKept(tables), [queue]);
  return affectedRows === 1;
}

/** Both halves checked: whole numbers of at least 1 (ms; jobs), or null. */
function validatePromise(promise: QueuePromise): { startWithinMs: number | null; maxReady: number | null } {
  if (typeof promise !== 'object' || promise === null) throw new OptionsError('promise', 'must be an object or null');
  rejectUnknownKeys('a queue promise', promise, ['startWithinMs', 'maxReady']);
  const startWithinMs = promise.startWithinMs ?? null;
  const maxReady = promise.maxReady ?? null;
  if (startWithinMs !== null) integerIn('startWithinMs', startWithinMs, 1, MAX_START_WITHIN_MS);
  if (maxReady !== null) integerIn('maxReady', maxReady, 1, MAX_PROMISED_READY);
  if (startWithinMs === null && maxReady === null)
    throw new OptionsError('promise', 'promises nothing: give startWithinMs or maxReady, or pass null to withdraw it');
  return { startWithinMs, maxReady };
}
