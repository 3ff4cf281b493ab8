import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/**
 * Which of many queues have free jobs, and when their next one falls due: a loose index scan of
 * ix_head (queue, lock_id, priority, run_at). `GROUP BY queue, lock_id, priority` with MIN(run_at)
 * is answered by two dives per (queue, priority) among the free jobs ("Using index for group-by"),
 * however many jobs each holds and whatever the queues' claimed rows: the statement's cost grows
 * with the groups it returns, never with the backlog, and its LIMIT stops it. Held jobs
 * (HELD_RUN_AT) are never due: a release rings instead.
 */

/** Each (queue, priority) of the free jobs: its earliest run_at, as ms from NOW(3) on the DB clock (≤ 0: due). */
const COLUMNS = `queue, priority, TIMESTAMPDIFF(MICROSECOND, NOW(3), MIN(run_at)) DIV 1000 AS due_in_ms`;

/**
 * Params: per list (`lists` of them), its names (at most NAMES_PER_READ) and the limit. At most 100
 * names a list, so that the server estimates each range by an index dive and keeps the list a list
 * (MariaDB turns 1,000 values into a join that reads every row of each queue); the lists of a
 * subscription go together, one statement (a round trip) for up to LISTS_PER_STATEMENT of them.
 */
const SQL_BY_NAME = (t: Tables, lists: number) =>
  Array.from(
    { length: lists },
    () => `(SELECT ${COLUMNS}
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue IN (?)
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'
GROUP BY queue, lock_id, priority
ORDER BY queue, lock_id, priority
LIMIT ?)`,
  ).join('\nUNION ALL\n');

/**
 * Params: ?1 lower bound (exclusive: the last queue read), ?2 start of the range (inclusive),
 * [?3 end of the range (exclusive) when bounded], then the limit. The queues of a name range
 * (a pattern's: model/queuePattern), in name order.
 */
const SQL_IN_RANGE = (t: Tables, bounded: boolean) => `
SELECT ${COLUMNS}
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue > ?
  AND queue >= ?${bounded ? '\n  AND queue < ?' : ''}
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'
GROUP BY queue, lock_id, priority
ORDER BY queue, lock_id, priority
LIMIT ?`;

/** Names per list of a read by name (see SQL_BY_NAME). */
const NAMES_PER_READ = 100;
/** Lists per statement of a read by name: a thousand names. */
const LISTS_PER_STATEMENT = 10;

/** A queue with free jobs. */
export interface ReadyQueue {
  readonly queue: string;
  /** Its free jobs' distinct priorities, ascending (as far as the read got: see readyQueuesInRange). */
  readonly priorities: readonly number[];
  /** Ms until its earliest free job falls due (≤ 0: one is due now). */
  readonly dueInMs: number;
}

type Row = { queue: string; priority: number | string; due_in_ms: number | string };

/**
 * The queues among `names` with free jobs: a statement per thousand names, each hundred of them
 * returning at most `limit` (queue, priority) pairs.
 */
export async function readyQueuesByName(
  db: Executor,
  t: Tables,
  names: readonly string[],
  limit: number,
): Promise<ReadyQueue[]> {
  const out: ReadyQueue[] = [];
  const perStatement = NAMES_PER_READ * LISTS_PER_STATEMENT;
  for (let i = 0; i < names.length; i += perStatement) {
    const lists: string[][] = [];
    for (let j = i; j < Math.min(names.length, i + perStatement); j += NAMES_PER_READ)
      lists.push(names.slice(j, Math.min(j + NAMES_PER_READ, i + perStatement)));
    const rows = await db.select<Row>(
      SQL_BY_NAME(t, lists.length),
      lists.flatMap((list) => [list, limit]),
    );
    out.push(...grouped(rows));
  }
  return out;
}

/**
 * The queues of the range [from, to) after `after` with free jobs, in name order: one statement,
 * at most `limit` (queue, priority) pairs. `next`: where the following read resumes (the last queue
 * returned), or null when the range is done. A read that stopped at its limit drops its last queue
 * (its priorities may be cut short), unless that queue filled the read alone: then it is kept with
 * the priorities read, its best ones.
 */
export async function readyQueuesInRange(
  db: Executor,
  t: Tables,
  range: { from: string; to: string | null },
  after: string,
  limit: number,
): Promise<{ queues: ReadyQueue[]; next: string | null }> {
  const params: unknown[] = [after, range.from];
  if (range.to !== null) params.push(range.to);
  params.push(limit);
  const rows = await db.select<Row>(SQL_IN_RANGE(t, range.to !== null), params);
  const queues = grouped(rows);
  if (rows.length < limit) return { queues, next: null };
  if (queues.length > 1) queues.pop();
  return { queues, next: (queues[queues.length - 1] as ReadyQueue).queue };
}

/** Pure: rows in (queue, priority) order, one entry per queue. */
function grouped(rows: readonly Row[]): ReadyQueue[] {
  const out: { queue: string; priorities: number[]; dueInMs: number }[] = [];
  for (const row of rows) {
    const last = out[out.length - 1];
    const dueInMs = Number(row.due_in_ms);
    if (last?.queue === row.queue) {
      last.priorities.push(Number(row.priority));
      last.dueInMs = Math.min(last.dueInMs, dueInMs);
    } else out.push({ queue: String(row.queue), priorities: [Number(row.priority)], dueInMs });
  }
  return out;
}
