import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { BELOW_SMALLINT, nextFreePriority } from '../queues/nextFreePriority.ts';

/**
 * Params: ?1 queue, ?2 priority, ?3 cap. Free due jobs of one priority, counting at most `cap`
 * entries of one covering ix_head range (queue, lock_id, priority, run_at), and how long the
 * oldest of them has waited (ms, DB clock): the range's first entry.
 */
const sqlReady = (t: Tables) => `
SELECT COUNT(*) AS n, TIMESTAMPDIFF(MICROSECOND, MIN(x.run_at), NOW(3)) DIV 1000 AS oldest_ms
FROM (
  SELECT run_at
  FROM ${t.jobs} FORCE INDEX (ix_head)
  WHERE queue = ?
    AND lock_id = ''
    AND priority = ?
    AND run_at <= NOW(3)
  ORDER BY run_at
  LIMIT ?
) x`;

/** Params: ?1 queue, ?2 priority, ?3 cap. Free jobs of one priority not yet due (delayed or retrying): the rest of the same range. */
const sqlNotDue = (t: Tables) => `
SELECT COUNT(*) AS n
FROM (
  SELECT run_at
  FROM ${t.jobs} FORCE INDEX (ix_head)
  WHERE queue = ?
    AND lock_id = ''
    AND priority = ?
    AND run_at > NOW(3)
  ORDER BY run_at
  LIMIT ?
) x`;

/** Params: ?1 queue, ?2 cap. Claimed jobs: the claimed range of ix_head (the jobs in flight, never the backlog). */
const sqlRunning = (t: Tables) => `
SELECT COUNT(*) AS n
FROM (
  SELECT lock_id
  FROM ${t.jobs} FORCE INDEX (ix_head)
  WHERE queue = ?
    AND lock_id > ''
  LIMIT ?
) x`;

/** Each count of a depth read stops after this many index entries unless the caller says otherwise. */
export const DEPTH_MAX_DEFAULT = 10_000;
/** Most queues one depth read of every queue covers (queue names in order). */
export const DEPTH_QUEUES_DEFAULT = 200;

/** A count that read at most its cap of index entries: exact, or at least `count`. */
export interface BoundedCount {
  readonly count: number;
  readonly exact: boolean;
}

export interface QueueDepth {
  /** Free and due. */
  readonly ready: BoundedCount;
  /** Free, not yet due: delayed, or retrying after a failure (telling them apart costs a row read each). */
  readonly notDue: BoundedCount;
  readonly running: BoundedCount;
  /** The oldest ready job's wait (DB clock); null when none is ready. */
  readonly oldestReadyMs: number | null;
}

/**
 * How deep one queue is, from index entries alone: per distinct free priority (one seek each, at
 * most `maxPriorities`) a covering range count of the due and of the not-yet-due jobs, and the
 * claimed range — each count stopping at `max` entries in all, so a queue of millions answers in
 * the time `max` index entries take. stats() counts exactly but reads the whole live table.
 */
export async function queueDepth(
  db: Executor,
  tables: Tables,
  queue: string,
  options: { max: number; maxPriorities?: number },
): Promise<QueueDepth> {
  const maxPriorities = options.maxPriorities ?? 32;
  let ready = 0;
  let notDue = 0;
  let oldest: number | null = null;
  let exact = true;
  let priority = await nextFreePriority(db, tables, queue, BELOW_SMALLINT);
  for (let seen = 0; priority !== null; seen++) {
    if (seen === maxPriorities) {
      exact = false;
      break;
    }
    const readyLeft = options.max - ready;
    const notDueLeft = options.max - notDue;
    // Past the cap the ready range is still read for one entry: its oldest job's age.
    const [r, d] = await Promise.all([
      db.select<{ n: number | string; oldest_ms: number | string | null }>(sqlReady(tables), [
        queue,
        priority,
        Math.max(1, readyLeft),
      ]),
      notDueLeft > 0 ? db.select<{ n: number | string }>(sqlNotDue(tables), [queue, priority, notDueLeft]) : [],
    ]);
    if (readyLeft > 0) ready += Number(r[0]?.n ?? 0);
    notDue += Number(d[0]?.n ?? 0);
    const age = r[0]?.oldest_ms;
    if (age !== null && age !== undefined) oldest = Math.max(oldest ?? 0, Number(age));
    priority = await nextFreePriority(db, tables, queue, priority);
  }
  const [running] = await db.select<{ n: number | string }>(sqlRunning(tables), [queue, options.max]);
  const runningCount = Number(running?.n ?? 0);
  return {
    ready: { count: ready, exact: exact && ready < options.max },
    notDue: { count: notDue, exact: exact && notDue < options.max },
    running: { count: runningCount, exact: runningCount < options.max },
    oldestReadyMs: oldest,
  };
}
