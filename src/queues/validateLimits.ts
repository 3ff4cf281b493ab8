import { OptionsError } from '../errors.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';

/** The largest cap and rate an INT UNSIGNED column holds. */
const MAX_LIMIT = 4_294_967_295;

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
