import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { OptionsError } from '../errors.ts';
import { MAX_GROUP_LIMIT } from '../model/groupOf.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';
import { reserve } from '../queues/reserveGroupStarts.ts';
import { setGroupRate } from '../queues/setGroupRate.ts';
import { validateRate } from '../queues/validateLimits.ts';
import { settleGroup } from './settleGroup.ts';

/**
 * Params: ?1 queue, ?2 group, ?3 limit, ?4 limit. Sets (or, NULL, removes) a group's own
 * concurrency limit, creating its row. The lock wait is bounded at 2 s, as settleGroup's.
 */
const sqlSetLimit = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, concurrency_limit, active, updated_at)
VALUES (?, ?, ?, 0, NOW(3))
ON DUPLICATE KEY UPDATE concurrency_limit = ?`;

/**
 * Params: ?1 queue, ?2 after group, ?3 limit. One page of a queue's groups in key order (the
 * primary key's range), each with its own limit, the limit in force (its own, else the queue's
 * group concurrency, else its fair window) and the slots taken; its own rate, the rate in force
 * (its own, else the queue's group rate, as reserveGroupStarts picks it), its reservation cursor
 * (the latest window with starts reserved and their count), its pause still to come, and the DB
 * clock (epoch ms, as the cursor).
 */
const sqlGroups = (t: Tables) => `
SELECT g.group_key, g.concurrency_limit, COALESCE(g.concurrency_limit, q.group_concurrency, q.fair_window) AS effective_limit,
       g.active, g.rate_limit, g.rate_interval_ms,
       IF(g.rate_limit IS NULL OR g.rate_interval_ms IS NULL, q.group_rate_limit, g.rate_limit) AS effective_rate_limit,
       IF(g.rate_limit IS NULL OR g.rate_interval_ms IS NULL, q.group_rate_interval_ms, g.rate_interval_ms)
         AS effective_rate_interval_ms,
       g.rate_window_ms, g.rate_used,
       IF(g.paused_until > NOW(3), FLOOR(UNIX_TIMESTAMP(g.paused_until) * 1000), NULL) AS paused_until_ms,
       FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000) AS now_ms
FROM ${t.jobGroups} g
LEFT JOIN ${t.queues} q ON q.queue = g.queue
WHERE g.queue = ?
  AND g.group_key > ?
ORDER BY g.group_key
LIMIT ?`;

/** One group's limits as an operator gives them. An absent key leaves that limit as it is; null removes it. */
export interface GroupLimits {
  /** At most this many of the group's jobs live and unheld (waiting, running, awaiting a retry) at once, fleet-wide. */
  readonly concurrency?: number | null;
  /**
   * At most `limit` of the group's jobs start per `intervalMs`: spread over windows at enqueue and
   * counted at claim (docs/flow-control.md, "Per-group rate limits"). Applies to jobs enqueued from then on.
   */
  readonly rate?: { readonly limit: number; readonly intervalMs: number } | null;
}

/** A group of a queue, with its limits and their use. */
export interface GroupState {
  readonly group: string;
  /** The group's own limit (null: the queue's default applies). */
  readonly concurrency: number | null;
  /** The limit in force: its own, else the queue's groupConcurrency, else its fair window; null: none. */
  readonly effectiveLimit: number | null;
  /** Slots taken: the group's jobs live and not held. */
  readonly active: number;
  /** The group's own rate (null: the queue's groupRate applies). */
  readonly rate: Rate | null;
  /** The rate in force: its own, else the queue's groupRate; null: none. */
  readonly effectiveRate: Rate | null;
  /**
   * Starts reserved in the current window of the rate in force (rates are reserved at enqueue): the
   * limit once reservations have moved on to a later window, 0 without a rate.
   */
  readonly rateUsed: number;
  /**
   * The earliest start a job of the group enqueued now would get, when later than now (its
   * reservations run ahead, or a pause); null: it would start at once.
   */
  readonly nextStartAt: Date | null;
  /** Paused by a handler's rate-limit signal until then, or null. */
  readonly pausedUntil: Date | null;
}

type Rate = { readonly limit: number; readonly intervalMs: number };

/** The most groups one page returns. */
export const MAX_GROUPS_PAGE = 1_000;

/**
 * Sets one group's own concurrency limit and, in the same short transaction, releases its held jobs
 * the new limit has room for. Returns the jobs released (the caller rings the queue).
 */
export async function setGroupLimits(
  db: Executor,
  tables: Tables,
  queue: string,
  group: string,
  limits: GroupLimits,
): Promise<number> {
  assertQueueName('queue', queue);
  if (typeof group !== 'string' || group.length < 1 || group.length > 191 || group.endsWith(' '))
    throw new OptionsError(
      'group',
      `must be a string of 1–191 characters not ending with a space (got ${String(group)})`,
    );
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  rejectUnknownKeys('a group limit', limits, ['concurrency', 'rate']);
  if (limits.concurrency === undefined && limits.rate === undefined)
    throw new OptionsError('limits', 'sets nothing: give concurrency or rate (null removes one)');
  if (limits.concurrency !== undefined && limits.concurrency !== null)
    integerIn('concurrency', limits.concurrency, 1, MAX_GROUP_LIMIT);
  validateRate('rate', limits.rate);
  if (limits.rate !== undefined) await setGroupRate(db, tables, queue, group, limits.rate);
  const limit = limits.concurrency;
  if (limit === undefined) return 0;
  return withTransaction(db, async (tx) => {
    await tx.write(sqlSetLimit(tables), [queue, group, limit, limit]);
    return settleGroup(tx, tables, { queue, group, freed: 0, limit: null });
  });
}

/** One page of a queue's groups (key order, after `after`), with their limits and their use: one statement. */
export async function listGroups(
  db: Executor,
  tables: Tables,
  queue: string,
  options: { readonly after?: string; readonly limit?: number } = {},
): Promise<GroupState[]> {
  assertQueueName('queue', queue);
  const limit = integerIn('limit', options.limit ?? 100, 1, MAX_GROUPS_PAGE);
  const rows = await db.select<GroupRow>(sqlGroups(tables), [queue, options.after ?? '', limit]);
  return rows.map((r) => {
    const nowMs = Number(r.now_ms);
    const effectiveRate = rateOf(r.effective_rate_limit, r.effective_rate_interval_ms);
    const pausedUntilMs = r.paused_until_ms === null ? 0 : Number(r.paused_until_ms);
    let rateUsed = 0;
    let startMs = Math.max(nowMs, pausedUntilMs);
    if (effectiveRate !== null) {
      const windowMs = r.rate_window_ms === null ? null : Number(r.rate_window_ms);
      const current = Math.floor(nowMs / effectiveRate.intervalMs) * effectiveRate.intervalMs;
      if (windowMs === current) rateUsed = Number(r.rate_used);
      else if (windowMs !== null && windowMs > current) rateUsed = effectiveRate.limit;
      // The start the next reservation would take, on a copy of the cursor.
      startMs = reserve({ ...effectiveRate, pausedUntilMs, windowMs, used: Number(r.rate_used) }, startMs);
    }
    return {
      group: r.group_key,
      concurrency: r.concurrency_limit === null ? null : Number(r.concurrency_limit),
      effectiveLimit: r.effective_limit === null ? null : Number(r.effective_limit),
      active: Number(r.active),
      rate: rateOf(r.rate_limit, r.rate_interval_ms),
      effectiveRate,
      rateUsed,
      nextStartAt: startMs > nowMs ? new Date(startMs) : null,
      pausedUntil: r.paused_until_ms === null ? null : new Date(pausedUntilMs),
    };
  });
}

interface GroupRow {
  group_key: string;
  concurrency_limit: number | null;
  effective_limit: number | string | null;
  active: number | string;
  rate_limit: number | null;
  rate_interval_ms: number | null;
  effective_rate_limit: number | string | null;
  effective_rate_interval_ms: number | string | null;
  rate_window_ms: number | string | null;
  rate_used: number | string;
  paused_until_ms: number | string | null;
  now_ms: number | string;
}

/** Pure: a rate from its two columns, null unless both are set. */
function rateOf(limit: number | string | null, intervalMs: number | string | null): Rate | null {
  return limit === null || intervalMs === null ? null : { limit: Number(limit), intervalMs: Number(intervalMs) };
}
