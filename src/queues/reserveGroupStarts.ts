import { escape as sqlLiteral } from 'mysql2';
import { binaryOrder } from '../db/binaryOrder.ts';
import type { Executor } from '../db/executor.ts';
import { type ChunkLimits, planChunks } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queues (list). Each queue's default rate for its groups (NULL: none). A plain read by
 * primary key: the queue's row is never locked here (limited claims lock it).
 */
const sqlQueueDefaults = (t: Tables) => `
SELECT queue, group_rate_limit, group_rate_interval_ms
FROM ${t.queues}
WHERE queue IN (?)
  AND group_rate_limit IS NOT NULL`;

/**
 * Params: ?1 (queue, group) pairs (list). The groups among them with a rate or a pause of their own:
 * a plain read by primary key, so that a group with neither is never locked nor written here (its
 * jobs keep their run_at). A rate or pause set while an enqueue runs applies from the next enqueue.
 */
const sqlRatedGroups = (t: Tables) => `
SELECT queue, group_key
FROM ${t.jobGroups}
WHERE (queue, group_key) IN (?)
  AND (rate_limit IS NOT NULL OR paused_until > NOW(3))`;

/**
 * Multi-row prefix; tuples are (queue, group, rate limit or NULL, interval or NULL, NOW(3)). Creates
 * each group's row, or sets the rate a job gave, and in both cases locks the row until the enqueue
 * commits: concurrent enqueues of one group take turns here (the lock wait is bounded at 2 s), and
 * in the caller's sorted order, so they never deadlock on each other.
 */
const sqlLockGroupsPrefix = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, rate_limit, rate_interval_ms, updated_at)
VALUES `;
const SQL_LOCK_GROUPS_SUFFIX = `
ON DUPLICATE KEY UPDATE rate_limit = IF(VALUES(rate_interval_ms) IS NULL, rate_limit, VALUES(rate_limit)),
                        rate_interval_ms = COALESCE(VALUES(rate_interval_ms), rate_interval_ms)`;

/**
 * Params: ?1 (queue, group) pairs (list; their rows locked by this transaction). Each group's rate,
 * its reservation cursor and pause, and the DB clock, all in epoch ms.
 */
const sqlGroupRows = (t: Tables) => `
SELECT queue, group_key, rate_limit, rate_interval_ms, rate_window_ms, rate_used,
       FLOOR(UNIX_TIMESTAMP(paused_until) * 1000) AS paused_until_ms,
       FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now_ms
FROM ${t.jobGroups}
WHERE (queue, group_key) IN (?)`;

/**
 * Multi-row prefix; tuples are (queue, group, window ms, used). Stores each rated group's cursor:
 * every row exists and is locked by this transaction, so each tuple updates its row.
 */
const sqlStoreCursorsPrefix = (t: Tables) => `
INSERT INTO ${t.jobGroups} (queue, group_key, rate_window_ms, rate_used)
VALUES `;
const SQL_STORE_CURSORS_SUFFIX = `
ON DUPLICATE KEY UPDATE rate_window_ms = VALUES(rate_window_ms),
                        rate_used = VALUES(rate_used)`;

/** What reserving a job's start needs: its group, the rate it sets, and when it is due. */
export interface GroupStartRequest {
  readonly queue: string;
  readonly group: string;
  readonly rate: { readonly limit: number; readonly intervalMs: number } | null;
  /** An absolute run time, or null for NOW(3) + delayMs. */
  readonly runAt: Date | null;
  readonly delayMs: number;
}

/**
 * Where a job of a group with a rate or a pause starts (epoch ms on the DB clock), and whether its
 * group has a rate: then its claim counts the start as well (JOB_FLAGS.groupRated).
 */
export interface GroupStart {
  readonly atMs: number;
  readonly rated: boolean;
}

interface GroupRow {
  queue: string;
  group_key: string;
  rate_limit: number | null;
  rate_interval_ms: number | null;
  rate_window_ms: number | string | null;
  rate_used: number;
  paused_until_ms: number | string | null;
  now_ms: number | string;
}

/** A group's rate and where its reservations stand (the enqueue's, and a claim's that gives a start back). */
export interface RateCursor {
  readonly limit: number;
  readonly intervalMs: number;
  readonly pausedUntilMs: number;
  windowMs: number | null;
  used: number;
}

/**
 * Inside the enqueue's transaction: reserves a start for each job of a rate-limited group, in the
 * order given, and returns it per job (GroupStart), or null for a job whose group has no rate and
 * no pause (it keeps its own run_at). A group's row holds the latest window with reservations and
 * their count: each job takes the first window from its own due time (or the group's pause) with
 * room, so 1,000 jobs of a group limited to 100 a minute get 10 minutes' worth of run_at, and wait
 * as future jobs outside the claim's head range. That bounds when they fall due, not when they
 * start: jobs that fall due together (a fleet behind, or down) are held to the rate by their claim,
 * which counts their starts (countGroupStarts) and gives a job over its window the next reservation
 * from this same cursor, once. A group paused by a handler (pauseGroupFor) starts
 * its new jobs after the pause, with or without a rate. At most five statements, whatever the number
 * of jobs and groups (each bounded by the packet limit): the queues' defaults, which groups have a
 * rate or pause of their own (skipped when every group has a rate given or by default), lock those
 * groups, read them, store the cursors; a group with no rate and no pause costs the first two only.
 */
export async function reserveGroupStarts(
  tx: Executor,
  tables: Tables,
  jobs: readonly GroupStartRequest[],
  limits: ChunkLimits,
): Promise<(GroupStart | null)[]> {
  if (jobs.length === 0) return [];
  const queues = [...new Set(jobs.map((j) => j.queue))];
  const defaults = new Map(
    (
      await tx.select<{ queue: string; group_rate_limit: number; group_rate_interval_ms: number }>(
        sqlQueueDefaults(tables),
        [queues],
      )
    ).map((r) => [r.queue, { limit: Number(r.group_rate_limit), intervalMs: Number(r.group_rate_interval_ms) }]),
  );
  // The rate each group is given by this call: the last job's that names one.
  const given = new Map<string, GroupStartRequest>();
  for (const job of jobs) if (!given.has(keyOf(job)) || job.rate !== null) given.set(keyOf(job), job);
  // Only groups with a rate (given now, the queue's default, or their own) or a pause are locked.
  const unrated = [...given.values()].filter((g) => g.rate === null && !defaults.has(g.queue));
  const rated =
    unrated.length === 0
      ? new Set<string>()
      : new Set(
          (
            await tx.select<{ queue: string; group_key: string }>(sqlRatedGroups(tables), [
              unrated.map((g) => [g.queue, g.group]),
            ])
          ).map((r) => keyOf({ queue: r.queue, group: r.group_key })),
        );
  const groups = [...given.values()]
    .filter((g) => g.rate !== null || defaults.has(g.queue) || rated.has(keyOf(g)))
    .sort((a, b) => binaryOrder(keyOf(a), keyOf(b)));
  if (groups.length === 0) return jobs.map(() => null);
  const tuples = groups.map(
    (g) =>
      `(${sqlLiteral(g.queue)},${sqlLiteral(g.group)},${g.rate?.limit ?? 'NULL'},${g.rate?.intervalMs ?? 'NULL'},NOW(3))`,
  );
  for (const statement of planChunks(sqlLockGroupsPrefix(tables), tuples, limits))
    await tx.write(statement + SQL_LOCK_GROUPS_SUFFIX);
  const rows = await tx.select<GroupRow>(sqlGroupRows(tables), [groups.map((g) => [g.queue, g.group])]);
  const nowMs = Number(rows[0]?.now_ms ?? Date.now());
  const cursors = new Map<string, RateCursor>();
  /** Groups without a rate that a handler paused: their jobs start after the pause, unspaced. */
  const pauses = new Map<string, number>();
  for (const r of rows) {
    const rate =
      r.rate_limit !== null && r.rate_interval_ms !== null
        ? { limit: Number(r.rate_limit), intervalMs: Number(r.rate_interval_ms) }
        : defaults.get(r.queue);
    const pausedUntilMs = r.paused_until_ms === null ? 0 : Number(r.paused_until_ms);
    const key = keyOf({ queue: r.queue, group: r.group_key });
    if (rate === undefined) {
      if (pausedUntilMs > nowMs) pauses.set(key, pausedUntilMs);
      continue;
    }
    cursors.set(key, {
      ...rate,
      pausedUntilMs,
      windowMs: r.rate_window_ms === null ? null : Number(r.rate_window_ms),
      used: Number(r.rate_used),
    });
  }
  if (cursors.size === 0 && pauses.size === 0) return jobs.map(() => null);
  const starts = jobs.map((job) => {
    const ownDueMs = job.runAt?.getTime() ?? nowMs + job.delayMs;
    const cursor = cursors.get(keyOf(job));
    if (cursor === undefined) {
      const pausedUntilMs = pauses.get(keyOf(job));
      return pausedUntilMs !== undefined && pausedUntilMs > ownDueMs ? { atMs: pausedUntilMs, rated: false } : null;
    }
    return { atMs: reserve(cursor, Math.max(ownDueMs, cursor.pausedUntilMs)), rated: true };
  });
  const stored = [...cursors].map(([key, c]) => {
    const [queue, group] = key.split('\u0000') as [string, string];
    return `(${sqlLiteral(queue)},${sqlLiteral(group)},${c.windowMs},${c.used})`;
  });
  for (const statement of planChunks(sqlStoreCursorsPrefix(tables), stored, limits))
    await tx.write(statement + SQL_STORE_CURSORS_SUFFIX);
  return starts;
}

/**
 * Pure: the start of one more job due at `dueMs`, advancing the cursor: the job's own window if the
 * cursor is behind it, else the cursor's window while it has room, else the next one. Returns the
 * later of the job's due time and its window's start.
 */
export function reserve(cursor: RateCursor, dueMs: number): number {
  const dueWindow = Math.floor(dueMs / cursor.intervalMs) * cursor.intervalMs;
  if (cursor.windowMs === null || cursor.windowMs < dueWindow) {
    cursor.windowMs = dueWindow;
    cursor.used = 0;
  }
  if (cursor.used >= cursor.limit) {
    cursor.windowMs += cursor.intervalMs;
    cursor.used = 0;
  }
  cursor.used++;
  return Math.max(dueMs, cursor.windowMs);
}

function keyOf(job: { readonly queue: string; readonly group: string }): string {
  return `${job.queue}\u0000${job.group}`;
}
