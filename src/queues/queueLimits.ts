import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';

/**
 * Params: ?1 queue, ?2 cap, ?3 rate limit, ?4 rate interval, ?5 group rate limit, ?6 group rate
 * interval (the new row), then per column a flag (1: set it) and its value: ?7 ?8 cap, ?9 ?10 limit,
 * ?11 ?12 interval, ?13 ?14 group limit, ?15 ?16 group interval. Sets the given limits of a queue,
 * leaving the others as they are, creating its row if it has none. Idempotent.
 */
const sqlSetLimits = (t: Tables) => `
INSERT INTO ${t.queues} (queue, concurrency_cap, rate_limit, rate_interval_ms, group_rate_limit, group_rate_interval_ms, updated_at)
VALUES (?, ?, ?, ?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE concurrency_cap = IF(?, ?, concurrency_cap),
                        rate_limit = IF(?, ?, rate_limit),
                        rate_interval_ms = IF(?, ?, rate_interval_ms),
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
SELECT q.queue, q.concurrency_cap, q.rate_limit, q.rate_interval_ms, q.group_rate_limit, q.group_rate_interval_ms,
       (SELECT COUNT(*) FROM ${t.jobs} j WHERE j.queue = q.queue AND j.lock_id > '') AS running,
       IF(q.rate_window_ms + q.rate_interval_ms > FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_used, 0) AS rate_used,
       IF(q.rate_interval_ms IS NULL, NULL,
          q.rate_interval_ms - MOD(FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), q.rate_interval_ms)) AS window_left_ms,
       IF(q.paused_until > NOW(3), q.paused_until, NULL) AS paused_until,
       IF(q.paused_until > NOW(3), TIMESTAMPDIFF(MICROSECOND, NOW(3), q.paused_until) DIV 1000, NULL) AS paused_for_ms
FROM ${t.queues} q
WHERE q.concurrency_cap IS NOT NULL
   OR q.rate_limit IS NOT NULL
   OR q.group_rate_limit IS NOT NULL
   OR q.paused_until > NOW(3)
ORDER BY q.queue
LIMIT ?`;

/** The most queues one read of the limits returns. */
export const MAX_LIMITED_QUEUES = 1_000;
/** The largest cap and rate an INT UNSIGNED column holds. */
const MAX_LIMIT = 4_294_967_295;

/** A queue's limits. An absent key leaves that limit as it is; null removes it. */
export interface QueueLimits {
  /** At most this many of the queue's jobs run at once, across every worker of the fleet. */
  readonly concurrency?: number | null;
  /** At most `limit` of the queue's jobs start per window of `intervalMs` (windows aligned to the DB clock). */
  readonly rate?: { readonly limit: number; readonly intervalMs: number } | null;
  /**
   * At most `limit` jobs of each group of the queue start per `intervalMs`, for a group with no rate
   * of its own: reserved at enqueue (docs/flow-control.md, "Per-group rate limits").
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
  readonly pausedForMs: number | null;
  /** At its cap, over its rate for this window, or paused until later: its due jobs wait. */
  readonly blocked: 'concurrency' | 'rate' | 'paused' | null;
}

/** Sets `queue`'s limits: the keys given (a number sets, null removes), the others unchanged. */
export async function setQueueLimits(db: Executor, tables: Tables, queue: string, limits: QueueLimits): Promise<void> {
  assertQueueName('queue', queue);
  const { concurrency, rate, groupRate } = validateLimits(limits);
  const cap = concurrency ?? null;
  const limit = rate?.limit ?? null;
  const intervalMs = rate?.intervalMs ?? null;
  const groupLimit = groupRate?.limit ?? null;
  const groupIntervalMs = groupRate?.intervalMs ?? null;
  const setCap = concurrency !== undefined ? 1 : 0;
  const setRate = rate !== undefined ? 1 : 0;
  const setGroupRate = groupRate !== undefined ? 1 : 0;
  await db.write(sqlSetLimits(tables), [
    queue,
    cap,
    limit,
    intervalMs,
    groupLimit,
    groupIntervalMs,
    setCap,
    cap,
    setRate,
    limit,
    setRate,
    intervalMs,
    setGroupRate,
    groupLimit,
    setGroupRate,
    groupIntervalMs,
  ]);
}

/** The queues with a limit or a pause-until (at most MAX_LIMITED_QUEUES, in name order), with their use: one statement. */
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
  }>(sqlLimits(tables), [MAX_LIMITED_QUEUES]);
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
      pausedForMs,
      blocked,
    };
  });
}

/** Pure: the limits checked — whole numbers of at least 1, or null — and unknown keys refused. */
export function validateLimits(limits: QueueLimits): QueueLimits {
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  rejectUnknownKeys('a queue limit', limits, ['concurrency', 'rate', 'groupRate']);
  const { concurrency, rate, groupRate } = limits;
  if (concurrency !== undefined && concurrency !== null) integerIn('concurrency', concurrency, 1, MAX_LIMIT);
  validateRate('rate', rate);
  validateRate('groupRate', groupRate);
  if (concurrency === undefined && rate === undefined && groupRate === undefined)
    throw new OptionsError('limits', 'sets nothing: give concurrency, rate or groupRate (null removes one)');
  return { concurrency, rate, groupRate };
}

/** Pure: a rate is `{ limit, intervalMs }` of whole numbers of at least 1, or null (removes it). */
export function validateRate(option: string, rate: QueueLimits['rate'] | undefined): void {
  if (rate === undefined || rate === null) return;
  if (typeof rate !== 'object') throw new OptionsError(option, 'must be { limit, intervalMs } or null');
  rejectUnknownKeys(`a rate limit (${option})`, rate, ['limit', 'intervalMs']);
  integerIn(`${option}.limit`, rate.limit, 1, MAX_LIMIT);
  integerIn(`${option}.intervalMs`, rate.intervalMs, 1, MAX_LIMIT);
}
