import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';

/**
 * The one enumeration of queue names. MySQL and MariaDB answer `GROUP BY` on the first column of
 * an index with a loose index scan ("Using index for group-by"): one or two dives per distinct
 * name, however many rows each holds, and the LIMIT stops it. So a page of names is one
 * statement per table, whatever the backlog; FORCE INDEX keeps the server from a full index read
 * when it misjudges the groups.
 */

/**
 * Params: ?1 lower bound (exclusive), ?2 limit. Queues of the live table after a name, in name
 * order, each with its greatest lock_id ('' when none of its jobs is claimed): ix_head's first
 * column, two dives per queue.
 */
const sqlLiveQueues = (t: Tables) => `
SELECT queue, MAX(lock_id) AS top_lock
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue > ?
GROUP BY queue
ORDER BY queue
LIMIT ?`;

/**
 * Params: ?1 lower bound (exclusive), ?2 limit. Queues holding a claimed job, in name order: the
 * same loose scan, which still dives into every queue it passes (the LIMIT counts queues kept).
 */
const sqlClaimedQueues = (t: Tables) => `
SELECT queue, MAX(lock_id) AS top_lock
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue > ?
GROUP BY queue
HAVING MAX(lock_id) > ''
ORDER BY queue
LIMIT ?`;

/** Params: ?1 lower bound (exclusive), ?2 limit. Queues among dead jobs: ix_queue_failed's first column. */
const sqlDeadQueues = (t: Tables) => `
SELECT queue
FROM ${t.deadJobs} FORCE INDEX (ix_queue_failed)
WHERE queue > ?
GROUP BY queue
ORDER BY queue
LIMIT ?`;

/** Params: ?1 lower bound (exclusive), ?2 limit. Queues with a row in the queues table (paused now or once). */
const sqlKnownQueues = (t: Tables) => `
SELECT queue
FROM ${t.queues}
WHERE queue > ?
ORDER BY queue
LIMIT ?`;

export interface QueueName {
  readonly name: string;
  /** Whether any of its jobs was claimed (running) when read; false for a queue with no live job. */
  readonly claimed: boolean;
}

export interface ListQueueNamesOptions {
  /**
   * Which queues: `live` — with a job in the live table; `claimed` — with a running job; `any` —
   * also those with dead jobs or a pause row. @defaultValue 'any'
   */
  readonly of?: 'live' | 'claimed' | 'any';
  /** Names after this one, in name order. @defaultValue from the first */
  readonly after?: string;
  /** Most names returned. @defaultValue 200 (at most 10,000) */
  readonly limit?: number;
}

/** Queue names in name order, a bounded page of them: one statement per table read (see above). */
export async function listQueueNames(
  db: Executor,
  tables: Tables,
  options: ListQueueNamesOptions = {},
): Promise<QueueName[]> {
  rejectUnknownKeys('a queue listing', options, ['of', 'after', 'limit']);
  const of = options.of ?? 'any';
  const after = options.after ?? '';
  const limit = integerIn('limit', options.limit ?? 200, 1, 10_000);
  const live = (
    await db.select<{ queue: string; top_lock: string }>(
      of === 'claimed' ? sqlClaimedQueues(tables) : sqlLiveQueues(tables),
      [after, limit],
    )
  ).map((r) => ({ name: r.queue, claimed: r.top_lock > '' }));
  if (of !== 'any') return live;
  const [dead, known] = await Promise.all([
    db.select<{ queue: string }>(sqlDeadQueues(tables), [after, limit]),
    db.select<{ queue: string }>(sqlKnownQueues(tables), [after, limit]),
  ]);
  const byName = new Map(live.map((q) => [q.name, q]));
  for (const { queue } of [...dead, ...known])
    if (!byName.has(queue)) byName.set(queue, { name: queue, claimed: false });
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, limit);
}
