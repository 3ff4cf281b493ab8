import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { type QueueLimits, validateLimits } from './validateLimits.ts';

/**
 * Params: ?1 queue, ?2 cap, ?3 rate limit, ?4 rate interval, ?5 group concurrency, ?6 fair window,
 * ?7 group rate limit, ?8 group rate interval (the new row), then per column a flag (1: set it) and
 * its value: ?9 ?10 cap, ?11 ?12 limit, ?13 ?14 interval, ?15 ?16 group concurrency, ?17 ?18 fair
 * window, ?19 ?20 group rate limit, ?21 ?22 group rate interval. Sets the given limits of a queue,
 * leaving the others as they are, creating its row if it has none. Idempotent.
 */
const sqlSetLimits = (t: Tables) => `
INSERT INTO ${t.queues} (queue, concurrency_cap, rate_limit, rate_interval_ms, group_concurrency, fair_window,
                         group_rate_limit, group_rate_interval_ms, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE concurrency_cap = IF(?, ?, concurrency_cap),
                        rate_limit = IF(?, ?, rate_limit),
                        rate_interval_ms = IF(?, ?, rate_interval_ms),
                        group_concurrency = IF(?, ?, group_concurrency),
                        fair_window = IF(?, ?, fair_window),
                        group_rate_limit = IF(?, ?, group_rate_limit),
                        group_rate_interval_ms = IF(?, ?, group_rate_interval_ms),
                        updated_at = NOW(3)`;

/**
 * The columns of a limited queue's row and its current use (`running` is read after, by
 * sqlRunning): `rate_used` the claims of the current window (0 once it has passed), how long the
 * window and the pause have to go (ms, DB clock), and `group_held` the queue's jobs held for their
 * group, only for a queue with a default for its groups (job_holds' ix_group range of the queue; a
 * workflow's holds have no queue): GROUP_HELD_MAX when the range holds an entry at offset ?1 (its
 * GROUP_HELD_MAX-th), else their count, fewer — at most GROUP_HELD_MAX index entries read either way.
 */
const limitColumns = (t: Tables) => `
SELECT q.queue, q.concurrency_cap, q.rate_limit, q.rate_interval_ms, q.group_concurrency, q.fair_window,
       q.group_rate_limit, q.group_rate_interval_ms,
       IF(q.rate_window_ms + q.rate_interval_ms > FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_used, 0) AS rate_used,
       IF(q.rate_interval_ms IS NULL, NULL,
          q.rate_interval_ms - MOD(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_interval_ms)) AS window_left_ms,
       IF(q.paused_until > NOW(3), q.paused_until, NULL) AS paused_until,
       IF(q.paused_until > NOW(3), TIMESTAMPDIFF(MICROSECOND, NOW(3), q.paused_until) DIV 1000, NULL) AS paused_for_ms,
       IF(q.group_concurrency IS NULL AND q.fair_window IS NULL, 0,
          IF((SELECT h.job_id
              FROM ${t.jobHolds} h
              WHERE h.queue = q.queue
              ORDER BY h.group_key, h.priority, h.run_at, h.job_id
              LIMIT ?, 1) IS NOT NULL,
             ${GROUP_HELD_MAX},
             (SELECT COUNT(*) FROM ${t.jobHolds} h WHERE h.queue = q.queue))) AS group_held
FROM ${t.queues} q`;

/**
 * Params: ?1 queues (a list). Each of these queues' claimed jobs (jobs in flight, bounded by the
 * fleet's slots, never the backlog), counted over the claimed ranges of ix_head: one range per
 * queue, only claimed entries read. A queue without one has no row. Not a subquery per queue row:
 * there the server seeks ix_head on the queue alone and reads every job of the queue (a fair
 * queue's 100,000 waiting jobs to count none claimed).
 */
const sqlRunning = (t: Tables) => `
SELECT queue, COUNT(*) AS running
FROM ${t.jobs}
WHERE queue IN (?)
  AND lock_id > ''
GROUP BY queue`;

/** A queues row that limits its queue now: a limit, or a pause-until still to come. */
const LIMITED = `(q.concurrency_cap IS NOT NULL
       OR q.rate_limit IS NOT NULL
       OR q.group_concurrency IS NOT NULL
       OR q.fair_window IS NOT NULL
       OR q.group_rate_limit IS NOT NULL
       OR q.paused_until > NOW(3))`;

/**
 * Params: ?1 offset (limitColumns), ?2 limit. The limited queues in name order, with their use (the
 * queues table holds a row per queue an operator touched: no index is needed to read it).
 */
const sqlLimits = (t: Tables) => `${limitColumns(t)}
WHERE ${LIMITED}
ORDER BY q.queue
LIMIT ?`;

/**
 * Params: ?1 offset (limitColumns), ?2 queues (a list). Those of these queues that are limited, by
 * primary key, in name order, with their use.
 */
const sqlLimitsOf = (t: Tables) => `${limitColumns(t)}
WHERE q.queue IN (?)
  AND ${LIMITED}
ORDER BY q.queue`;

/** Group-held jobs are counted per queue up to this many ("at least" past it). */
export const GROUP_HELD_MAX = 10_000;

/** The most queues one read of the limits returns. */
export const MAX_LIMITED_QUEUES = 1_000;

/** A fair queue's window when none is given: how many jobs each group keeps live and unheld. */
export const FAIR_WINDOW_DEFAULT = 500;

/** A limited (or paused-until) queue's limits and their current use. */
export interface QueueLimitsState {
  readonly queue: string;
  readonly concurrency: number | null;
  readonly rate: { readonly limit: number; readonly intervalMs: number } | null;
  /** The default rate of each of the queue's groups, or null. */
  readonly groupRate: { readonly limit: number; readonly intervalMs: number } | null;
  /** The queue's jobs claimed now (running), across the fleet. */
  readonly running: number;
  /** Starts counted in the current rate window (0 without a rate). */
  readonly rateUsed: number;
  /** How long the current rate window has to go, or null without a rate. */
  readonly windowLeftMs: number | null;
  /** Paused until then by a handler's rate-limit signal, or null. */
  readonly pausedUntil: Date | null;
  /** The default concurrency limit of each of its groups, or null. */
  readonly groupConcurrency: number | null;
  /** A fair queue's window per group, or null when the queue is not fair. */
  readonly fairWindow: number | null;
  /**
   * Jobs held back by their group's limit or the fair window (not waiting for a worker), counted
   * up to GROUP_HELD_MAX; 0 for a queue with no group default (groupConcurrency, fair).
   */
  readonly groupHeld: number;
  readonly pausedForMs: number | null;
  /** At its cap, over its rate for this window, or paused until later: its due jobs wait. */
  readonly blocked: 'concurrency' | 'rate' | 'paused' | null;
}

/** Sets `queue`'s limits: the keys given (a number sets, null removes), the others unchanged. */
export async function setQueueLimits(db: Executor, tables: Tables, queue: string, limits: QueueLimits): Promise<void> {
  assertQueueName('queue', queue);
  const { concurrency, rate, groupConcurrency, fair, fairWindow, groupRate } = validateLimits(limits);
  const cap = concurrency ?? null;
  const limit = rate?.limit ?? null;
  const intervalMs = rate?.intervalMs ?? null;
  const groups = groupConcurrency ?? null;
  const window = fair === true ? (fairWindow ?? FAIR_WINDOW_DEFAULT) : null;
  const groupLimit = groupRate?.limit ?? null;
  const groupIntervalMs = groupRate?.intervalMs ?? null;
  const setCap = concurrency !== undefined ? 1 : 0;
  const setRate = rate !== undefined ? 1 : 0;
  const setGroups = groupConcurrency !== undefined ? 1 : 0;
  const setFair = fair !== undefined ? 1 : 0;
  const setGroupRate = groupRate !== undefined ? 1 : 0;
  await db.write(sqlSetLimits(tables), [
    queue,
    cap,
    limit,
    intervalMs,
    groups,
    window,
    groupLimit,
    groupIntervalMs,
    setCap,
    cap,
    setRate,
    limit,
    setRate,
    intervalMs,
    setGroups,
    groups,
    setFair,
    window,
    setGroupRate,
    groupLimit,
    setGroupRate,
    groupIntervalMs,
  ]);
}

/**
 * The limited queues (a limit or a pause-until) with their use: the first MAX_LIMITED_QUEUES in
 * name order, or — `queues` given — those of these queues (at most MAX_LIMITED_QUEUES names), read
 * by key. Two statements either way (the rows, then their claimed jobs over ix_head's claimed
 * ranges), whatever the queues' groups and backlogs.
 */
export async function queueLimits(
  db: Executor,
  tables: Tables,
  queues?: readonly string[],
): Promise<QueueLimitsState[]> {
  if (queues !== undefined) {
    if (!Array.isArray(queues)) throw new OptionsError('queues', 'must be a list of queue names');
    if (queues.length > MAX_LIMITED_QUEUES)
      throw new OptionsError('queues', `must name at most ${MAX_LIMITED_QUEUES} queues (got ${queues.length})`);
    for (const [i, q] of queues.entries()) assertQueueName(`queues[${i}]`, q);
    if (queues.length === 0) return [];
  }
  const offset = GROUP_HELD_MAX - 1;
  const rows =
    queues === undefined
      ? await db.select<LimitsRow>(sqlLimits(tables), [offset, MAX_LIMITED_QUEUES])
      : await db.select<LimitsRow>(sqlLimitsOf(tables), [offset, [...new Set(queues)]]);
  if (rows.length === 0) return [];
  const counts = await db.select<{ queue: string; running: number | string }>(sqlRunning(tables), [
    rows.map((r) => r.queue),
  ]);
  const running = new Map(counts.map((c) => [c.queue, Number(c.running)]));
  return rows.map((r) => limitsState(r, running.get(r.queue) ?? 0));
}

interface LimitsRow {
  queue: string;
  concurrency_cap: number | null;
  rate_limit: number | null;
  rate_interval_ms: number | null;
  group_rate_limit: number | null;
  group_rate_interval_ms: number | null;
  rate_used: number | string;
  window_left_ms: number | string | null;
  paused_until: Date | null;
  paused_for_ms: number | string | null;
  group_concurrency: number | null;
  fair_window: number | null;
  group_held: number | string;
}

/** Pure: a row of limitColumns and its queue's claimed jobs as the API gives them. */
function limitsState(r: LimitsRow, running: number): QueueLimitsState {
  const concurrency = r.concurrency_cap === null ? null : Number(r.concurrency_cap);
  const rate =
    r.rate_limit === null || r.rate_interval_ms === null
      ? null
      : { limit: Number(r.rate_limit), intervalMs: Number(r.rate_interval_ms) };
  const rateUsed = rate === null ? 0 : Number(r.rate_used);
  const pausedForMs = r.paused_for_ms === null ? null : Math.max(0, Number(r.paused_for_ms));
  const blocked =
    pausedForMs !== null
      ? 'paused'
      : concurrency !== null && running >= concurrency
        ? 'concurrency'
        : rate !== null && rateUsed >= rate.limit
          ? 'rate'
          : null;
  const groupRate =
    r.group_rate_limit === null || r.group_rate_interval_ms === null
      ? null
      : { limit: Number(r.group_rate_limit), intervalMs: Number(r.group_rate_interval_ms) };
  return {
    queue: r.queue,
    concurrency,
    rate,
    groupRate,
    running,
    rateUsed,
    windowLeftMs: r.window_left_ms === null ? null : Number(r.window_left_ms),
    pausedUntil: r.paused_until,
    groupConcurrency: r.group_concurrency === null ? null : Number(r.group_concurrency),
    fairWindow: r.fair_window === null ? null : Number(r.fair_window),
    groupHeld: Math.min(GROUP_HELD_MAX, Number(r.group_held)),
    pausedForMs,
    blocked,
  };
}
