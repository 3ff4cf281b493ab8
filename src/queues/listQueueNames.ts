import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { nextQueue } from './nextQueue.ts';

/** Params: ?1 lower bound (exclusive). The next queue name among dead jobs: one ix_queue_failed seek. */
const sqlNextDeadQueue = (t: Tables) => `
SELECT MIN(queue) AS queue
FROM ${t.deadJobs}
WHERE queue > ?`;

/** Params: none. Queues with a row in the queues table (paused now or once). */
const sqlKnownQueues = (t: Tables) => `
SELECT queue
FROM ${t.queues}
ORDER BY queue
LIMIT 1000`;

/**
 * The queues that have live jobs, dead jobs or a pause row, in name order, up to `max`: one
 * index seek per distinct name (no loose index scan in MySQL/MariaDB), never a scan of a backlog.
 */
export async function listQueueNames(db: Executor, tables: Tables, max = 200): Promise<string[]> {
  const names = new Set<string>();
  for (let q = await nextQueue(db, tables, null); q !== null && names.size < max; q = await nextQueue(db, tables, q))
    names.add(q);
  const dead: string[] = [];
  for (
    let q = await nextDeadQueue(db, tables, '');
    q !== null && dead.length < max;
    q = await nextDeadQueue(db, tables, q)
  )
    dead.push(q);
  for (const q of dead) names.add(q);
  for (const row of await db.select<{ queue: string }>(sqlKnownQueues(tables))) names.add(row.queue);
  return [...names].sort().slice(0, max);
}

async function nextDeadQueue(db: Executor, tables: Tables, after: string): Promise<string | null> {
  const [row] = await db.select<{ queue: string | null }>(sqlNextDeadQueue(tables), [after]);
  return row?.queue ?? null;
}
