import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { ClaimLostError } from '../../errors.ts';
import { JOB_FLAGS } from '../../model/jobFlags.ts';
import { type RateCursor, reserve } from '../../queues/reserveGroupStarts.ts';
import type { ClaimedRow } from './claimedRow.ts';
import { releaseClaims } from './releaseClaims.ts';

/**
 * Params: ?1 ids (list: the claim's flagged rows), ?2 lockId. Creates the rated groups' rows if they
 * have none and locks them, in utf8mb4_bin order of the group (the order every writer of job_groups
 * locks in: no deadlock between them), the groups read from the claimed rows themselves (their
 * group is not among the claimed columns). The lock wait is bounded at 2 s (MariaDB SET STATEMENT;
 * MySQL 8 SET_VAR, not run here: only MariaDB 10.11 runs on this machine); a timeout (1205) re-runs
 * the transaction. READ COMMITTED: the SELECT part reads the claimed rows without locking them.
 */
const sqlLockGroups = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, updated_at)
SELECT DISTINCT queue, group_key, NOW(3)
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ?
  AND group_key IS NOT NULL
ORDER BY group_key
ON DUPLICATE KEY UPDATE updated_at = NOW(3)`;

/**
 * Params: ?1 ids (list), ?2 lockId. Each flagged row still held by this claim, in the claim's order
 * (priority, run_at, id), with its group's locked row: the rate (its own, or the queue's default:
 * the queues row is read, not locked), the starts counted and in which window, the reservation
 * cursor, the pause, and the DB clock read once the locks are held; times in epoch ms.
 */
const sqlReadGroups = (t: Tables) => `
SELECT j.id, j.queue, j.group_key,
       g.rate_limit, g.rate_interval_ms, q.group_rate_limit, q.group_rate_interval_ms,
       g.start_window_ms, g.starts, g.rate_window_ms, g.rate_used,
       FLOOR(UNIX_TIMESTAMP(g.paused_until) * 1000) AS paused_until_ms,
       FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now_ms
FROM ${t.jobs} j
JOIN ${t.jobGroups} g ON g.queue = j.queue AND g.group_key = j.group_key
LEFT JOIN ${t.queues} q ON q.queue = j.queue
WHERE j.id IN (?)
  AND j.lock_id = ?
ORDER BY j.priority, j.run_at, j.id`;

/**
 * Params: per group ?queue, ?group, ?start window, ?starts, ?reservation window, ?reserved. Stores
 * each rated group's count of starts and its reservation cursor: every row exists and is locked by
 * this transaction, so each tuple updates its row. (VALUES() in the update list is deprecated from
 * MySQL 8.0.20, still accepted; MariaDB has no row alias.)
 */
const sqlStoreCounts = (t: Tables, groups: number) => `
INSERT INTO ${t.jobGroups} (queue, group_key, start_window_ms, starts, rate_window_ms, rate_used)
VALUES ${Array.from({ length: groups }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}
ON DUPLICATE KEY UPDATE start_window_ms = VALUES(start_window_ms),
                        starts = VALUES(starts),
                        rate_window_ms = VALUES(rate_window_ms),
                        rate_used = VALUES(rate_used)`;

/**
 * Params: pairs (id, new run_at) for the CASE, then ?ids (list), then the lockId. Gives the jobs over
 * their group's window back to the queue for the start each was given: free, not due before it,
 * retry_times unchanged (no attempt was made). Fenced on the claim. affectedRows = ids.length, or
 * fewer if a claim was lost.
 */
const sqlDefer = (t: Tables, count: number) => `
UPDATE ${t.jobs}
SET lock_id = '',
    locked_at = DEFAULT,
    run_at = CASE id ${Array.from({ length: count }, () => 'WHEN ? THEN ?').join(' ')} END
WHERE id IN (?)
  AND lock_id = ?`;

interface GroupRow {
  id: number | string;
  queue: string;
  group_key: string;
  rate_limit: number | null;
  rate_interval_ms: number | null;
  group_rate_limit: number | null;
  group_rate_interval_ms: number | null;
  start_window_ms: number | string | null;
  starts: number | string;
  rate_window_ms: number | string | null;
  rate_used: number | string;
  paused_until_ms: number | string | null;
  now_ms: number | string;
}

/** One rated group as this claim counts it. */
interface GroupCount {
  readonly cursor: RateCursor;
  readonly windowMs: number;
  starts: number;
}

/** Pure: whether a claimed row's start is counted against its group's rate (JOB_FLAGS.groupRated). */
export function isGroupRated(row: ClaimedRow): boolean {
  return (Number(row.flags) & JOB_FLAGS.groupRated) !== 0;
}

/**
 * A group's rate held at start time. The enqueue's reservation spreads a group's jobs over windows
 * (their run_at), but jobs fall due together when the fleet falls behind or comes up after the
 * enqueue; so a claim that took jobs flagged groupRated counts them, before any of them runs, in
 * one short transaction: lock their groups' rows, count each job against its group's current window
 * (DB clock, windows aligned to the interval, as a queue's rate), and give each job over the window
 * back, unclaimed and not retried, at the group's next reservation with room (after the jobs already
 * reserved, so that it is not claimed and given back again at every window with the rest of a
 * backlog). A paused group's jobs go past the pause. It runs after the claim committed rather than
 * inside it: the default claim is autocommit statements, and a transaction around every claim would
 * cost jobs of no rated group; a claimed job does not start before this commits. Returns the claimed
 * rows that may start, in the claim's order: the unflagged ones untouched (a claim with no flagged
 * row never calls this). Four statements at most (lock,
 * read, store the counts, give back), whatever the rows and groups. If the count fails, the whole
 * claim is given back (retry_times unchanged) and the error thrown: none of its rows is left held by
 * a claim that will not run it.
 */
export async function countGroupStarts(
  db: Executor,
  tables: Tables,
  lockId: string,
  rows: readonly ClaimedRow[],
): Promise<ClaimedRow[]> {
  const flagged = rows.filter(isGroupRated).map((r) => Number(r.id));
  try {
    const starting = await withTransaction(db, (tx) => countInTransaction(tx, tables, lockId, flagged));
    return rows.filter((r) => !isGroupRated(r) || starting.has(Number(r.id)));
  } catch (error) {
    await releaseClaims(
      db,
      tables,
      lockId,
      rows.map((r) => Number(r.id)),
    ).catch(() => 0);
    throw error;
  }
}

/** The transaction of countGroupStarts: returns the ids of the flagged rows that may start. */
async function countInTransaction(
  tx: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
): Promise<Set<number>> {
  await tx.write(sqlLockGroups(tables), [ids, lockId]);
  const read = await tx.select<GroupRow>(sqlReadGroups(tables), [ids, lockId]);
  const starting = new Set<number>();
  const groups = new Map<string, { queue: string; group: string; count: GroupCount | null }>();
  const deferred: [number, Date][] = [];
  for (const row of read) {
    const id = Number(row.id);
    const key = `${row.queue}\u0000${row.group_key}`;
    let entry = groups.get(key);
    if (entry === undefined) {
      entry = { queue: row.queue, group: row.group_key, count: countOf(row) };
      groups.set(key, entry);
    }
    const group = entry.count;
    if (group === null) {
      starting.add(id); // its group has no rate any more: nothing to count
      continue;
    }
    const { cursor, windowMs } = group;
    if (cursor.pausedUntilMs <= Number(row.now_ms) && group.starts < cursor.limit) {
      group.starts++;
      starting.add(id);
      continue;
    }
    deferred.push([id, new Date(reserve(cursor, Math.max(windowMs + cursor.intervalMs, cursor.pausedUntilMs)))]);
  }
  const counted = [...groups.values()].filter((g) => g.count !== null);
  if (counted.length > 0)
    await tx.write(
      sqlStoreCounts(tables, counted.length),
      counted.flatMap(({ queue, group, count }) => {
        const { windowMs, starts, cursor } = count as GroupCount;
        return [queue, group, windowMs, starts, cursor.windowMs, cursor.used];
      }),
    );
  if (deferred.length > 0) {
    const deferredIds = deferred.map(([id]) => id);
    const { affectedRows } = await tx.write(sqlDefer(tables, deferred.length), [
      ...deferred.flat(),
      deferredIds,
      lockId,
    ]);
    if (affectedRows !== deferred.length)
      throw new ClaimLostError('defer over group rate', lockId, deferredIds, deferred.length - affectedRows);
  }
  return starting;
}

/** Pure: how a group's row counts this claim's starts, or null when the group has no rate now. */
function countOf(row: GroupRow): GroupCount | null {
  const own = row.rate_limit !== null && row.rate_interval_ms !== null;
  const limit = own ? row.rate_limit : row.group_rate_limit;
  const intervalMs = own ? row.rate_interval_ms : row.group_rate_interval_ms;
  if (limit === null || intervalMs === null) return null;
  const interval = Number(intervalMs);
  const windowMs = Math.floor(Number(row.now_ms) / interval) * interval;
  const counted = row.start_window_ms !== null && Number(row.start_window_ms) === windowMs;
  return {
    cursor: {
      limit: Number(limit),
      intervalMs: interval,
      pausedUntilMs: row.paused_until_ms === null ? 0 : Number(row.paused_until_ms),
      windowMs: row.rate_window_ms === null ? null : Number(row.rate_window_ms),
      used: Number(row.rate_used),
    },
    windowMs,
    starts: counted ? Number(row.starts) : 0,
  };
}
