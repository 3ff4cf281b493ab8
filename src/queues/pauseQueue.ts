import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { assertQueueName } from '../model/queueName.ts';

/** Params: ?1 queue. Pauses a queue: no worker claims from it until resumed; running jobs finish. Idempotent. */
const sqlPause = (t: Tables) => `
INSERT INTO ${t.queues} (queue, paused_at, updated_at)
VALUES (?, NOW(3), NOW(3))
ON DUPLICATE KEY UPDATE paused_at = COALESCE(paused_at, NOW(3)), updated_at = NOW(3)`;

/** Params: ?1 queue. Resumes a queue. Idempotent. */
const sqlResume = (t: Tables) => `
UPDATE ${t.queues}
SET paused_at = NULL,
    updated_at = NOW(3)
WHERE queue = ?`;

/** A page of paused queues. */
export const PAUSED_PAGE = 1_000;

/**
 * Params: ?1 after (queue name, '' for the first page). The next page of paused queues in name
 * order, since when: a primary-key walk from `after`, stopping at a page (it reads every queue row
 * between two paused ones).
 */
const sqlPaused = (t: Tables) => `
SELECT queue, paused_at
FROM ${t.queues}
WHERE queue > ? AND paused_at IS NOT NULL
ORDER BY queue
LIMIT ${PAUSED_PAGE}`;

export async function pauseQueue(db: Executor, tables: Tables, queue: string): Promise<void> {
  await db.write(sqlPause(tables), [assertQueueName('queue', queue)]);
}

export async function resumeQueue(db: Executor, tables: Tables, queue: string): Promise<void> {
  await db.write(sqlResume(tables), [assertQueueName('queue', queue)]);
}

export async function pausedQueues(
  db: Executor,
  tables: Tables,
  after = '',
): Promise<{ queue: string; pausedAt: Date }[]> {
  const rows = await db.select<{ queue: string; paused_at: Date }>(sqlPaused(tables), [after]);
  return rows.map((r) => ({ queue: r.queue, pausedAt: r.paused_at }));
}
