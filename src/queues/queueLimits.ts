import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';

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
 * Params: ?1 limit. The queues with a limit or a pause-until still to come, in name order, each with
 * its current use: `running` counts the queue's claimed jobs (the claimed range of ix_head: jobs in
 * flight, bounded by the fleet's slots, never the backlog), `rate_used` the claims of the current
 * window (0 once it has passed), and how long the window and the pause have to go (ms, DB clock).
 * The queues table holds a row per queue an operator touched: no index is needed to read it whole.
 */
const sqlLimits = (t: Tables) => `
SELECT q.queue, q.concurrency_cap, q.rate_limit, q.rate_interval_ms, q.group_concurrency, q.fair_window,
       q.group_rate_limit, q.group_rate_interval_ms,
       (SELECT COUNT(*) FROM ${t.jobs} j WHERE j.queue = q.queue AND j.lock_id > '') AS running,
       IF(q.rate_window_ms + q.rate_interval_ms > FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_used, 0) AS rate_used,
       IF(q.rate_interval_ms IS NULL, NULL,
          q.rate_interval_ms - MOD(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_interval_ms)) AS window_left_ms,
       IF(q.paused_until > NOW(3), q.paused_until, NULL) AS paused_until,
       IF(q.paused_until > NOW(3), TIMESTAMPDIFF(MICROSECOND, NOW(3), q.paused_until) DIV 1000, NULL) AS paused_for_ms
FROM ${t.queues} q
WHERE q.concurrency_cap IS NOT NULL
   OR q.rate_limit IS NOT NULL
   OR q.group_concurrency IS NOT NULL
   OR q.fair_window IS NOT NULL
   OR q.group_rate_limit IS NOT NULL
   OR q.paused_until > NOW(3)
ORDER BY q.queue
LIMIT ?`;

/**
 * Params: ?1 queue, ?2 max. The queue's jobs held for their group (job_holds' ix_group range of the
 * queue; a workflow's holds have no queue), counted up to `max` index entries.
 */
const sqlGroupHeld = (t: Tables) => `
SELECT COUNT(*) AS held
FROM (SELECT 1 FROM ${t.jobHolds} WHERE queue = ? LIMIT ?) AS h`;

/** Group-held jobs are counted per queue up to this many ("at least" past it). */
export const GROUP_HELD_MAX = 10_000;

/** The most queues one read of the limits returns. */
export const MAX_LIMITED_QUEUES = 1_000;
/** The largest cap and rate an INT UNSIGNED column holds. */
const MAX_LIMIT = 4_294_967_295;

/** A fair queue's window when none is given: how many jobs each group keeps live and unheld. */
export const FAIR_WINDOW_DEFAULT = 500;

/** A queue's limits. An absent key leaves that limit as it is; null removes it. */
export interface QueueLimits {
  /** At most this many of the queue's jobs run at once, across every worker of the fleet. */
  readonly concurrency?: number | null;
  /** At most `limit` of the queue's jobs start per window of `intervalMs` (windows aligned to the DB clock). */
  readonly rate?: { readonly limit: number; readonly intervalMs: number } | null;
  /** Every group of the queue (JobSpec.group) runs at most this many of its jobs at once, unless it has a limit of its own. */
  readonly groupConcurrency?: number | null;
  /**
   * Fair shares between the queue's groups: each group keeps at most `fairWindow` jobs live and
   * unheld, the rest join the queue one per finished job of their group (docs/flow-control.md).
   */
  readonly fair?: boolean;
  /** A fair queue's window per group: more than the jobs the fleet runs at once of one group. @defaultValue 500 */
  readonly fairWindow?: number;
  /**
   * At most `limit` jobs of each group of the queue start per `intervalMs`, for a group with no rate
   * of its own: spread over windows at enqueue and counted at claim (docs/flow-control.md,
   * "Per-group rate limits"). Applies to jobs enqueued from then on.
   */
  readonly groupRate?: { readonly limit: number; readonly intervalMs: number } | null;
}

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
 * The queues with a limit or a pause-until (at most MAX_LIMITED_QUEUES, in name order), with their
 * use: one statement, and one bounded count per queue with a default for its groups.
 */
export async function queueLimits(db: Executor, tables: Tables): Promise<QueueLimitsState[]> {
  const rows = await db.select<{
    queue: string;
    concurrency_cap: number | null;
    rate_limit: number | null;
    rate_interval_ms: number | null;
    group_rate_limit: number | null;
    group_rate_interval_ms: number | null;
    running: number | string;
    rate_used: number | string;
    window_left_ms: number | string | null;
    paused_until: Date | null;
    paused_for_ms: number | string | null;
    group_concurrency: number | null;
    fair_window: number | null;
  }>(sqlLimits(tables), [MAX_LIMITED_QUEUES]);
  const groupHeld = new Map<string, number>();
  // One bounded index read per queue with a default for its groups; none for the others.
  for (const r of rows) {
    if (r.group_concurrency === null && r.fair_window === null) continue;
    const [held] = await db.select<{ held: number | string }>(sqlGroupHeld(tables), [r.queue, GROUP_HELD_MAX]);
    groupHeld.set(r.queue, Number(held?.held ?? 0));
  }
  return rows.map((r) => {
    const concurrency = r.concurrency_cap === null ? null : Number(r.concurrency_cap);
    const rate =
      r.rate_limit === null || r.rate_interval_ms === null
        ? null
        : { limit: Number(r.rate_limit), intervalMs: Number(r.rate_interval_ms) };
    const running = Number(r.running);
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
      groupHeld: groupHeld.get(r.queue) ?? 0,
      pausedForMs,
      blocked,
    };
  });
}

/** Pure: the limits checked — whole numbers of at least 1, or null — and unknown keys refused. */
export function validateLimits(limits: QueueLimits): QueueLimits {
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  rejectUnknownKeys('a queue limit', limits, [
    'concurrency',
    'rate',
    'groupConcurrency',
    'fair',
    'fairWindow',
    'groupRate',
  ]);
  const { concurrency, rate, groupConcurrency, fair, fairWindow, groupRate } = limits;
  if (groupConcurrency !== undefined && groupConcurrency !== null)
    integerIn('groupConcurrency', groupConcurrency, 1, MAX_LIMIT);
  if (fair !== undefined && typeof fair !== 'boolean') throw new OptionsError('fair', 'must be true or false');
  if (fairWindow !== undefined) {
    if (fair !== true) throw new OptionsError('fairWindow', "needs fair: true (it is the fair queue's window)");
    integerIn('fairWindow', fairWindow, 1, MAX_LIMIT);
  }
  if (concurrency !== undefined && concurrency !== null) integerIn('concurrency', concurrency, 1, MAX_LIMIT);
  validateRate('rate', rate);
  validateRate('groupRate', groupRate);
  if (
    concurrency === undefined &&
    rate === undefined &&
    groupConcurrency === undefined &&
    fair === undefined &&
    groupRate === undefined
  )
    throw new OptionsError(
      'limits',
      'sets nothing: give concurrency, rate, groupConcurrency, groupRate (null removes one) or fair',
    );
  return { concurrency, rate, groupConcurrency, fair, fairWindow, groupRate };
}

/** Pure: a rate is `{ limit, intervalMs }` of whole numbers of at least 1, or null (removes it). */
export function validateRate(option: string, rate: QueueLimits['rate'] | undefined): void {
  if (rate === undefined || rate === null) return;
  if (typeof rate !== 'object') throw new OptionsError(option, 'must be { limit, intervalMs } or null');
  rejectUnknownKeys(`a rate limit (${option})`, rate, ['limit', 'intervalMs']);
  integerIn(`${option}.limit`, rate.limit, 1, MAX_LIMIT);
  integerIn(`${option}.intervalMs`, rate.intervalMs, 1, MAX_LIMIT);
}
