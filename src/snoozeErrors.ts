import { OptionsError, SluiceError } from './errors.ts';
import { optionKeys, rejectUnknownKeys } from './options.ts';

/** The longest a job can snooze or pause its queue: a day (ms). */
export const MAX_SNOOZE_MS = 86_400_000;

/**
 * Thrown by `ctx.snooze(ms)` (or by a handler itself): run the job again `delayMs` from now on the DB
 * clock. Not a failure: no attempt is counted (retry_times stays), no error is recorded; the worker
 * emits `job:snoozed`. With `pauseQueue`, the job's queue is paused for as long too.
 */
export class JobSnoozedError extends SluiceError {
  readonly delayMs: number;
  readonly pauseQueue: boolean;
  /** The job's group is paused as long, and its waiting jobs moved past the pause. */
  readonly pauseGroup: boolean;

  constructor(
    delayMs: number,
    options: { pauseQueue?: boolean; pauseGroup?: boolean; code?: string; message?: string } = {},
  ) {
    if (!(typeof delayMs === 'number' && delayMs >= 0 && delayMs <= MAX_SNOOZE_MS)) {
      throw new OptionsError(
        'delayMs',
        `must be a number of milliseconds in [0, ${MAX_SNOOZE_MS}] (got ${String(delayMs)})`,
      );
    }
    super(options.code ?? 'SLUICE_SNOOZED', options.message ?? `snoozed for ${Math.ceil(delayMs)} ms`);
    this.delayMs = Math.ceil(delayMs);
    this.pauseQueue = options.pauseQueue ?? false;
    this.pauseGroup = options.pauseGroup ?? false;
  }
}

/**
 * Thrown by a handler whose downstream said "too many requests, retry after X" (an HTTP 429): the
 * job snoozes for `retryAfterMs` without counting a failed attempt, and with `{ pause: 'queue' }`
 * its whole queue pauses for as long, so that the jobs behind it do not each hit the wall; with
 * `{ pause: 'group' }` only its group does (its waiting jobs move past the pause).
 */
export class RateLimitedError extends JobSnoozedError {
  constructor(
    readonly retryAfterMs: number,
    options: RateLimitedOptions = {},
  ) {
    rejectUnknownKeys('new RateLimitedError(retryAfterMs, options)', options, RATE_LIMITED_KEYS);
    if (options.pause !== undefined && options.pause !== 'queue' && options.pause !== 'group')
      throw new OptionsError('pause', `must be 'queue' or 'group' (got ${JSON.stringify(options.pause)})`);
    super(retryAfterMs, {
      pauseQueue: options.pause === 'queue',
      pauseGroup: options.pause === 'group',
      code: 'SLUICE_RATE_LIMITED',
      message: `rate limited: retry after ${retryAfterMs} ms${options.pause ? ` (${options.pause} paused as long)` : ''}`,
    });
  }
}

const RATE_LIMITED_KEYS = optionKeys<RateLimitedOptions>({ pause: true });

/** What a `RateLimitedError` holds back besides its job, for `retryAfterMs`. */
export interface RateLimitedOptions {
  /**
   * `'queue'`: the job's whole queue pauses (every worker, for every job of it); `'group'`: only its
   * group does (docs/flow-control.md). @defaultValue only the job waits
   */
  readonly pause?: 'queue' | 'group';
}
