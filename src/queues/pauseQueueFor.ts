import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue, ?2 and ?3 the pause in microseconds. Pauses a queue until NOW(3) + the pause
 * (a handler's rate-limit signal), or keeps a later pause-until that is already set; creates the
 * queue's row if it has none. Claims skip the queue until then, with no one to resume it.
 */
const sqlPauseFor = (t: Tables) => `
INSERT INTO ${t.queues} (queue, paused_until, updated_at)
VALUES (?, NOW(3) + INTERVAL ? MICROSECOND, NOW(3))
ON DUPLICATE KEY UPDATE paused_until = GREATEST(COALESCE(paused_until, NOW(3)), NOW(3) + INTERVAL ? MICROSECOND),
                        updated_at = NOW(3)`;

/** Pauses `queue` for `ms` from now on the DB clock (a later pause-until already set is kept). */
export async function pauseQueueFor(db: Executor, tables: Tables, queue: string, ms: number): Promise<void> {
  const micros = Math.round(ms * 1000);
  await db.write(sqlPauseFor(tables), [queue, micros, micros]);
}
