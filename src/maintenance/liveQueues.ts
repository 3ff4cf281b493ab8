import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Returns the distinct queues of the live table, by a loose scan of ix_head (queue is its first
 * column): one seek per queue, however many rows each holds.
 */
const sqlLiveQueues = (t: Tables) => `
SELECT DISTINCT queue
FROM ${t.jobs}`;

/** The queues that hold any job: where the maintenance process looks for claims (ix_head, one range per queue). */
export async function liveQueues(db: Executor, tables: Tables): Promise<string[]> {
  return (await db.select<{ queue: string }>(sqlLiveQueues(tables))).map((r) => r.queue);
}
