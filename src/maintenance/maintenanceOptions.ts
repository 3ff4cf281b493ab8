import { OptionsError } from '../errors.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { defined, integerIn, numberAtLeast, rejectUnknownKeys } from '../options.ts';
import { TASK_DEFAULTS } from '../task/MaintenanceTask.ts';
import { type MonotonicClock, monotonicClock } from './UnchangedSince.ts';

/** sluice.maintenance()'s options. Every field is optional. */
export interface MaintenanceOptions {
  /** node-cron expression (seconds field allowed) for maintenance passes. @defaultValue every 5 s */
  schedule?: string;
  /**
   * Claims of workers that registered no lock timeout of their own (a dead worker already
   * removed, or one of an older version) are released after this long without a heartbeat. A
   * registered worker's claims follow the lock timeout it registered. @defaultValue 30,000
   */
  lockTimeoutMs?: number;
  /** How long a leader's lease lasts without renewal. @defaultValue 30,000 */
  leaseMs?: number;
  /** Rows per maintenance statement. @defaultValue 500 */
  batchSize?: number;
  /** Random delay added before each tick and between batches, up to this much. @defaultValue 1,000 */
  jitterMs?: number;
  /**
   * Job definitions (a jobs folder or a list) whose `schedule` this process enqueues. Every
   * maintenance process may carry them: each tick is enqueued once fleet-wide. @defaultValue none
   */
  jobs?: string | JobDefinition<any>[] | null;
  /** Random delay before a scheduled enqueue. @defaultValue 500 */
  scheduleJitterMs?: number;
  /** A worker that missed this many of its own heartbeat intervals is dead: its claims are released. @defaultValue 2.5 */
  missedHeartbeats?: number;
  /**
   * Most retention-pruning batches per table in one run: bounds the statements a run sends,
   * whatever its time budget. @defaultValue 200
   */
  maxPruneBatches?: number;
  /**
   * How long each retention task keeps deleting while its batches come back full. A task that
   * stops behind (its last batch full) runs again after a short jittered pause rather than at the
   * next tick, so pruning keeps pace with the rate rows arrive at; one that caught up waits for
   * the next tick. The queue check (checkQueues) reads queue depths for as long, and goes on at
   * the next pass with the queues it did not reach. @defaultValue 1,000
   */
  pruneBudgetMs?: number;
  /**
   * How long one pass's tasks may take between them, on `clock`. The tasks that walk what the
   * install's shape grows (held jobs, groups, unfinished batches, queue depths, retention) share
   * it: each gets what is left (and at most its own budget, `pruneBudgetMs`), stops after the
   * statement that crosses it and goes on from there next pass. Once it is spent each later task
   * still takes one step (a page, one read of queue depths), so none waits behind a heavy one.
   * Releasing crashed workers' claims and firing due schedules are bounded by their batches
   * instead. The default leaves room for those steps within a second. @defaultValue 750
   */
  passBudgetMs?: number;
  /**
   * How often the leader reads every queue's depth (bounded index reads, a few per queue and
   * priority), records it for the metrics and holds promised queues to their promise: once per
   * pass, skipping passes within this long of the last reading. Raise it where hundreds of deep
   * queues make the reading heavy; promises are then judged, and the queue series refreshed,
   * that much less often. @defaultValue 0: every pass
   */
  queueCheckIntervalMs?: number;
  /**
   * The monotonic clock (ms) on which this process measures liveness: how long a worker's beat,
   * a claim or the lease has stood unchanged between its own observations. Tests pass one they
   * move. @defaultValue performance.now
   */
  clock?: MonotonicClock;
}

export type ResolvedMaintenanceOptions = Readonly<
  Required<Omit<MaintenanceOptions, 'jobs'>> & { jobs: string | readonly JobDefinition<any>[] | null }
>;

export const MAINTENANCE_DEFAULTS = {
  schedule: '*/5 * * * * *',
  lockTimeoutMs: 30_000,
  leaseMs: 30_000,
  batchSize: TASK_DEFAULTS.batchSize,
  jitterMs: TASK_DEFAULTS.jitterMs,
  jobs: null,
  scheduleJitterMs: 500,
  missedHeartbeats: 2.5,
  maxPruneBatches: TASK_DEFAULTS.maxBatches,
  pruneBudgetMs: TASK_DEFAULTS.pruneBudgetMs,
  passBudgetMs: TASK_DEFAULTS.passBudgetMs,
  queueCheckIntervalMs: 0,
  clock: monotonicClock,
} as const satisfies ResolvedMaintenanceOptions;

export function resolveMaintenanceOptions(options: MaintenanceOptions): ResolvedMaintenanceOptions {
  rejectUnknownKeys('sluice.maintenance', options, Object.keys(MAINTENANCE_DEFAULTS));
  const r = { ...MAINTENANCE_DEFAULTS, ...defined(options) };
  integerIn('lockTimeoutMs', r.lockTimeoutMs, 1);
  integerIn('leaseMs', r.leaseMs, 1);
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('jitterMs', r.jitterMs, 0);
  integerIn('scheduleJitterMs', r.scheduleJitterMs, 0);
  integerIn('maxPruneBatches', r.maxPruneBatches, 1, 10_000);
  integerIn('pruneBudgetMs', r.pruneBudgetMs, 1, 600_000);
  integerIn('passBudgetMs', r.passBudgetMs, 1, 600_000);
  integerIn('queueCheckIntervalMs', r.queueCheckIntervalMs, 0);
  numberAtLeast('missedHeartbeats', r.missedHeartbeats, 1.5);
  if (typeof r.clock !== 'function') throw new OptionsError('clock', 'must be a function returning milliseconds');
  if (typeof r.schedule !== 'string' || r.schedule.trim() === '')
    throw new OptionsError('schedule', 'must be a cron expression');
  return r;
}
