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

/** Params: none. Returns the paused queues and since when. */
const sqlPaused = (t: Tables) => `
SELECT queue, paused_at
FROM ${t.queues}
WHERE paused_at IS NOT NULL
ORDER BY queue`;

export async function pauseQueue(db: Executor, tables: Tables, queue: string): Promise<void> {
  await db.write(sqlPause(tables), [assertQueueName('queue', queue)]);
}

export async function resumeQueue(db: Executor, tables: Tables, queue: string): Promise<void> {
  await db.write(sqlResume(tables), [assertQueueName('queue', queue)]);
}

export async function pausedQueues(db: Executor, tables: Tables): Promise<{ queue: string; pausedAt: Date }[]> {
  const rows = await db.select<{ queue: string; paused_at: Date }>(sqlPaused(tables));
  return rows.map((r) => ({ queue: r.queue, pausedAt: r.paused_at }));
}
