import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';
import { walkQueueNames } from './walkQueueNames.ts';

/**
 * The one enumeration of queue names. MySQL and MariaDB can answer `GROUP BY` on the first column
 * of an index with a loose index scan ("Using index for group-by"): one or two dives per distinct
 * name, however many rows each holds, and the LIMIT stops it. But the server chooses it by cost,
 * and with a LIMIT and statistics that say queues are small it chooses a range scan instead, which
 * reads every row of the queues it passes — a queue of millions among them. So the live table's
 * page asks the plan first (EXPLAIN) and walks the index in bounded reads when the plan is not the
 * loose scan (walkQueueNames); a walk may stop short of its limit and says where to go on.
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

/** A page of queue names, and where the next one starts. */
export interface QueueNamePage {
  readonly names: QueueName[];
  /**
   * Pass as `after` for the next page: null when no queue follows. A page may hold fewer than
   * `limit` names and still have a next one: the server's plan made the listing walk the index
   * (walkQueueNames), and the walk stops at its read budget.
   */
  readonly next: string | null;
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

/** What EXPLAIN says of a statement the server answers by a loose index scan. */
const LOOSE_SCAN = /Using index for group-by/;

/**
 * The live table's queues after `after`: by the loose index scan when the server's plan for it is
 * one (EXPLAIN first: it picks a range scan that reads every row of the queues it passes when
 * its statistics say queues are small, as after `ANALYZE` on many small queues beside a deep
 * one), else by a bounded walk of the index.
 */
async function liveQueues(
  db: Executor,
  tables: Tables,
  claimedOnly: boolean,
  after: string,
  limit: number,
): Promise<QueueNamePage> {
  const sql = claimedOnly ? sqlClaimedQueues(tables) : sqlLiveQueues(tables);
  const plan = await db.select<{ Extra: string | null }>(`EXPLAIN ${sql}`, [after, limit]);
  if (plan.some((row) => LOOSE_SCAN.test(row.Extra ?? ''))) {
    const rows = await db.select<{ queue: string; top_lock: string }>(sql, [after, limit]);
    const names = rows.map((r) => ({ name: r.queue, claimed: r.top_lock > '' }));
    return { names, next: names.length === limit ? (names[names.length - 1] as QueueName).name : null };
  }
  const walk = await walkQueueNames(db, tables, after, limit);
  const names = walk.queues.map((q) => ({ name: q.name, claimed: q.topLock > '' }));
  return { names: claimedOnly ? names.filter((q) => q.claimed) : names, next: walk.next };
}

/**
 * Queue names in name order, a bounded page of them, and where the next page starts: the live
 * table's by one statement (a loose index scan) or a bounded walk (see liveQueues), and for `any`
 * the dead jobs' and the queues table's, a statement each.
 */
export async function listQueueNames(
  db: Executor,
  tables: Tables,
  options: ListQueueNamesOptions = {},
): Promise<QueueNamePage> {
  rejectUnknownKeys('a queue listing', options, ['of', 'after', 'limit']);
  const of = options.of ?? 'any';
  const after = options.after ?? '';
  const limit = integerIn('limit', options.limit ?? 200, 1, 10_000);
  const live = await liveQueues(db, tables, of === 'claimed', after, limit);
  if (of !== 'any') return live;
  const [dead, known] = await Promise.all([
    db.select<{ queue: string }>(sqlDeadQueues(tables), [after, limit]),
    db.select<{ queue: string }>(sqlKnownQueues(tables), [after, limit]),
  ]);
  // Names past where the live listing stopped belong to a later page.
  const bound = live.next;
  const byName = new Map(live.names.map((q) => [q.name, q]));
  for (const { queue } of [...dead, ...known])
    if (!byName.has(queue) && (bound === null || queue <= bound)) byName.set(queue, { name: queue, claimed: false });
  const names = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, limit);
  // A full page goes on after its last name; a short one where the live listing stopped, if it did
  // (the dead and known pages can be full only when the names are).
  return { names, next: names.length === limit ? (names[limit - 1] as QueueName).name : bound };
}
