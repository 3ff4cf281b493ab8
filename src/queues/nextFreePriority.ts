import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Below every SMALLINT priority: the first seek's lower bound. */
export const BELOW_SMALLINT = -32769;

/**
 * Params: ?1 queue, ?2 lower bound (exclusive). The next priority value among the queue's free
 * jobs: a single seek into ix_head (queue, lock_id, priority, …) answered from the index alone,
 * whatever the backlog.
 */
const sqlNextPriority = (t: Tables) => `
SELECT MIN(priority) AS priority
FROM ${t.jobs}
WHERE queue = ?
  AND lock_id = ''
  AND priority > ?`;

/**
 * Params: ?1 first queue, ?2 last queue, ?3 limit. The lowest and highest priority of the free jobs
 * of each queue in [first, last], in name order: a loose index scan of ix_head (MIN/MAX over the
 * free range of each queue, queue = ? AND lock_id = ''), a few dives per queue — never into its
 * claims or its backlog. When the range is small the server may read it instead: it knows from
 * one index dive how small.
 */
const sqlPriorityBounds = (t: Tables) => `
SELECT queue, MIN(priority) AS lowest, MAX(priority) AS highest
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue BETWEEN ? AND ?
  AND lock_id = ''
GROUP BY queue
ORDER BY queue
LIMIT ?`;

/**
 * Params: per queue (`n` of them, at most 100), the queue twice. The lowest and highest priority
 * of the free jobs of each, by key: per queue a MIN() and a MAX() over a constant prefix of
 * ix_head (queue = ?, lock_id = ''), which the server answers with one dive each ("Select tables
 * optimized away") whatever the queue holds. A grouped read of the same ranges is answered by a
 * loose index scan only when the server's statistics say queues are large on average; otherwise
 * it reads every free job of each, a backlog of a million among them. A queue without free jobs
 * answers NULLs.
 */
const sqlPriorityBoundsOf = (t: Tables, n: number) =>
  Array.from(
    { length: n },
    () => `SELECT ? AS queue, MIN(priority) AS lowest, MAX(priority) AS highest
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ? AND lock_id = ''`,
  ).join('\nUNION ALL\n');

/**
 * Params: ?1 queues (a list of at most 100), ?2 limit. Every distinct priority of the free jobs of
 * those queues, in (queue, priority) order: a loose index scan of ix_head, one dive per (queue,
 * priority), from each queue's free range. At most 100 names, so that the server estimates each
 * range by an index dive (eq_range_index_dive_limit) and keeps the list a list (MariaDB turns
 * 1,000 values into a join that reads every row of each queue).
 */
const sqlFreePriorities = (t: Tables) => `
SELECT queue, priority
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue IN (?)
  AND lock_id = ''
GROUP BY queue, lock_id, priority
ORDER BY queue, lock_id, priority
LIMIT ?`;

/** Queues per read of their distinct priorities (see sqlFreePriorities). */
const QUEUES_PER_PRIORITY_READ = 100;

/**
 * The next priority value above `after` among the queue's free (unclaimed) jobs, or null: one
 * MIN() seek. The claimer's head (worker/QueuePriorities) walks a queue's priorities this way, a
 * seek per value, and so does a listing that resumes inside a queue (jobs/QueueWalk); walks over
 * many queues read them in batches (freePriorities).
 */
export async function nextFreePriority(db: Executor, t: Tables, queue: string, after: number): Promise<number | null> {
  const [row] = await db.select<{ priority: number | null }>(sqlNextPriority(t), [queue, after]);
  return row?.priority ?? null;
}

/**
 * The lowest and highest priority among the queue's free jobs, or null when it has none: two
 * dives in one statement (sqlPriorityBoundsOf), whatever the backlog.
 */
export async function freePriorityBounds(
  db: Executor,
  t: Tables,
  queue: string,
): Promise<{ lowest: number; highest: number } | null> {
  const [row] = await db.select<{ lowest: number | null; highest: number | null }>(sqlPriorityBoundsOf(t, 1), [
    queue,
    queue,
  ]);
  return row?.lowest == null || row.highest == null
    ? null
    : { lowest: Number(row.lowest), highest: Number(row.highest) };
}

/** The free priorities of some queues, as far as bounded reads got. */
export interface FreePriorities {
  /** Each queue's priorities, ascending (a queue without free jobs has none). */
  readonly byQueue: ReadonlyMap<string, readonly number[]>;
  /** Queues whose list may lack values past its last one (more than a read holds). */
  readonly incomplete: ReadonlySet<string>;
}

/**
 * The distinct free priorities of some queues (in name order), at most `perRead` pairs per read:
 * one read of each queue's lowest and highest priority — all most queues need — then one read per
 * hundred queues that have more than one. Up to a hundred queues are read by key, two dives each.
 * More take the range from the first name to the last, as many queues as were asked for: for a run
 * of a listing (consecutive names) that is all of them. Where the range holds other queues too
 * (names picked apart: a listing's run plus the promised queues), it stops short and the rest are
 * read by key, a hundred per read.
 */
export async function freePriorities(
  db: Executor,
  t: Tables,
  queues: readonly string[],
  perRead: number,
): Promise<FreePriorities> {
  const byQueue = new Map<string, number[]>();
  const incomplete = new Set<string>();
  if (queues.length === 0) return { byQueue, incomplete };
  type Bounds = { queue: string; lowest: number | null; highest: number | null };
  const byKey = (names: readonly string[]) =>
    db.select<Bounds>(
      sqlPriorityBoundsOf(t, names.length),
      names.flatMap((q) => [q, q]),
    );
  let found: Bounds[];
  let rest: readonly string[];
  if (queues.length <= QUEUES_PER_PRIORITY_READ) {
    // A few queues, perhaps far apart: by key, whatever lies between them or in them.
    found = [];
    rest = queues;
  } else {
    const bounds = await db.select<Bounds>(sqlPriorityBounds(t), [queues[0], queues[queues.length - 1], queues.length]);
    const wanted = new Set(queues);
    found = bounds.filter((row) => wanted.has(row.queue));
    // A range that holds other queues too stopped short of the last names: read those by key.
    const cutAfter = bounds.length === queues.length ? bounds[bounds.length - 1]?.queue : undefined;
    rest = cutAfter === undefined ? [] : queues.filter((q) => q > cutAfter);
  }
  for (let i = 0; i < rest.length; i += QUEUES_PER_PRIORITY_READ)
    found.push(...(await byKey(rest.slice(i, i + QUEUES_PER_PRIORITY_READ))).filter((r) => r.lowest !== null));
  const several: string[] = [];
  for (const row of found) {
    byQueue.set(row.queue, [Number(row.lowest)]);
    if (Number(row.highest) !== Number(row.lowest)) several.push(row.queue);
  }
  for (let i = 0; i < several.length; )
    i += await readSeveral(db, t, several.slice(i, i + QUEUES_PER_PRIORITY_READ), perRead, byQueue, incomplete);
  return { byQueue, incomplete };
}

/**
 * Reads every priority of `queues` (from the first) into `byQueue`; returns how many queues it
 * finished: all but where the read stopped at its limit (then the caller reads on from there),
 * or just the first, marked incomplete, when it alone filled the read.
 */
async function readSeveral(
  db: Executor,
  t: Tables,
  queues: readonly string[],
  limit: number,
  byQueue: Map<string, number[]>,
  incomplete: Set<string>,
): Promise<number> {
  const rows = await db.select<{ queue: string; priority: number }>(sqlFreePriorities(t), [queues, limit]);
  const cutAt = rows.length === limit ? rows[rows.length - 1]?.queue : undefined;
  const read = new Map<string, number[]>();
  for (const row of rows) {
    const list = read.get(row.queue);
    if (list) list.push(Number(row.priority));
    else read.set(row.queue, [Number(row.priority)]);
  }
  for (const [queue, list] of read) if (queue !== cutAt || cutAt === queues[0]) byQueue.set(queue, list);
  if (cutAt === undefined) return queues.length;
  if (cutAt === queues[0]) {
    incomplete.add(cutAt);
    return 1;
  }
  return queues.indexOf(cutAt);
}
