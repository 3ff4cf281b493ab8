import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import { finishBatches } from '../batches/finishBatches.ts';
import { assertSchemaCurrent } from '../db/migrate.ts';
import { pruneDeadJobs } from '../deadJobs/pruneDeadJobs.ts';
import { pruneDebounces } from '../enqueue/pruneDebounces.ts';
import { OptionsError } from '../errors.ts';
import { pruneHistory } from '../history/pruneHistory.ts';
import { pruneIdempotencyKeys } from '../idempotency/pruneIdempotencyKeys.ts';
import { attemptRetentionMs } from '../jobControl/pruneAttemptRows.ts';
import { pruneJobErrors } from '../jobControl/pruneJobErrors.ts';
import { pruneJobLogs } from '../jobControl/pruneJobLogs.ts';
import { pruneProgress } from '../jobControl/pruneProgress.ts';
import { pruneGroupMembers } from '../queues/pruneGroupMembers.ts';
import { fireSchedules } from '../scheduler/fireSchedules.ts';
import { Scheduler } from '../scheduler/Scheduler.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { DEPTH_MAX_DEFAULT, DEPTH_QUEUES_DEFAULT } from '../stats/queueDepth.ts';
import type { MaintenancePass as GenericPass, PassCounts, SkippedRelease } from '../task/MaintenanceTask.ts';
import { totalChanged } from '../task/MaintenanceTask.ts';
import { pruneTraceContexts } from '../tracing/pruneTraceContexts.ts';
import { ClaimTokens } from '../worker/ClaimTokens.ts';
import { loadHandlers } from '../worker/loadHandlers.ts';
import { pruneGraphHistory } from '../workflows/pruneGraphHistory.ts';
import { checkQueues } from './checkQueues.ts';
import { LeaderLease } from './LeaderLease.ts';
import { MAINTENANCE_LEASE, recordTaskRuns } from './maintenanceHealth.ts';
import type { ResolvedMaintenanceOptions } from './maintenanceOptions.ts';
import { reconcileGroups } from './reconcileGroups.ts';
import { reconcileHolds } from './reconcileHolds.ts';
import { releaseDeadWorkers } from './releaseDeadWorkers.ts';
import { releaseStaleClaims } from './releaseStaleClaims.ts';
import { runWithinBudget } from './runWithinBudget.ts';

/**
 * The pause before a catch-up pass: at least this, and at least as long as the pass before it ran
 * (jittered ±50%), so pruning that is behind takes at most about half of the time and the
 * workers' statements get the server meanwhile.
 */
const CATCH_UP_PAUSE_MS = 200;

/**
 * The maintenance tasks, in the order a pass runs them: each made from this process's resolved
 * options and the install's, and each validating its own when made.
 */
function tasksOf(runtime: SluiceRuntime, options: ResolvedMaintenanceOptions, holder: string) {
  const { db, tables, events } = runtime;
  const taskDb = { db, tables };
  const { missedHeartbeats, lockTimeoutMs, batchSize, jitterMs, maxPruneBatches: maxBatches, clock } = options;
  const { redactPayload, keptAttempts, idempotencyRetentionMs } = runtime.options;
  // The install's retentions, asked at every run: a pass reads the settings first.
  const { retention } = runtime;
  const historyRetentionMs = () => retention.historyRetentionMs;
  const onSkipped = (skipped: SkippedRelease) => events.emit('maintenance:skipped', { holder, ...skipped });
  const onFinished = (batch: { batchId: number; completionJob: boolean }) =>
    events.emit('batch:finished', { holder, ...batch });
  const pruning = { batchSize, maxBatches, jitterMs, budgetMs: options.pruneBudgetMs };
  // How a workflow job's dependents are kept when a task cancels them (its parent died or was lost).
  const cancel = {
    // Read at each cancel: the install's retention may change while the process runs.
    get history() {
      return historyRetentionMs() > 0;
    },
    keyRetentionMs: idempotencyRetentionMs,
    redact: redactPayload,
  };
  const onReleased = (queues: ReadonlyMap<string, number>) => runtime.ringer.ring(tables.prefix, queues);
  const deadLettering = { onSkipped, redactPayload, keptAttempts, cancel, onReleased };
  return [
    fireSchedules(runtime, { batchSize }),
    releaseDeadWorkers(taskDb, { missedHeartbeats, batchSize, clock, ...deadLettering }),
    releaseStaleClaims(taskDb, { lockTimeoutMs, batchSize, jitterMs, clock, ...deadLettering }),
    reconcileHolds(taskDb, { batchSize, cancel, onReleased, clock }),
    reconcileGroups(taskDb, { batchSize, onReleased }),
    finishBatches(taskDb, { batchSize, onFinished }),
    pruneIdempotencyKeys(taskDb, {
      retentionMs: idempotencyRetentionMs,
      batchSize,
      maxBatches,
      budgetMs: options.pruneBudgetMs,
    }),
    pruneDebounces(taskDb, { batchSize }),
    pruneGroupMembers(taskDb, { batchSize }),
    pruneHistory(taskDb, { retentionMs: historyRetentionMs, ...pruning }),
    pruneDeadJobs(taskDb, { retentionMs: () => retention.deadRetentionMs, ...pruning }),
    pruneProgress(taskDb, { retentionMs: historyRetentionMs, ...pruning }),
    pruneGraphHistory(taskDb, { retentionMs: historyRetentionMs, ...pruning }),
    pruneJobErrors(taskDb, { retentionMs: () => attemptRetentionMs(retention), ...pruning }),
    pruneJobLogs(taskDb, { retentionMs: () => attemptRetentionMs(retention), ...pruning }),
    checkQueues(taskDb, {
      intervalMs: options.queueCheckIntervalMs,
      clock,
      maxQueues: DEPTH_QUEUES_DEFAULT,
      depthMax: DEPTH_MAX_DEFAULT,
      budgetMs: options.pruneBudgetMs,
      onBroken: (broken) => events.emit('promise:broken', { holder, ...broken }),
      onKept: (kept) => events.emit('promise:kept', { holder, ...kept }),
    }),
    pruneTraceContexts(taskDb, { retentionMs: historyRetentionMs, ...pruning }),
  ] as const;
}

/** Every task's counts of one pass, by task name. */
export type MaintenanceCounts = PassCounts<ReturnType<typeof tasksOf>>;

/** One maintenance pass, with this install's task names and counts. */
export type MaintenancePass = GenericPass<MaintenanceCounts>;

/**
 * The maintenance process: on a node-cron schedule (each tick delayed by random jitter), take or
 * renew the leader lease, and if we lead, run each task once, in order (tasksOf), stopping early
 * if the lease ran out on our own clock meanwhile (a pass stalled for leaseMs: someone else may
 * lead by now). Every pass, leader or not, first lets the tasks that watch liveness watch.
 * runOnce() does one pass and returns its counts; `maintenance:completed` carries the same object.
 */
export class Maintenance {
  /** This process's name in the leader lease (who leads shows it). */
  readonly holder = `${ClaimTokens.processPrefix}~${randomBytes(4).toString('hex')}`;
  readonly #lease: LeaderLease;
  readonly #tasks: ReturnType<typeof tasksOf>;
  #cron: ScheduledTask | undefined;
  #scheduler: Scheduler | undefined;
  #pass: Promise<MaintenancePass> | null = null;
  #catchUp: NodeJS.Timeout | undefined;
  #catchingUp: Promise<MaintenancePass> | null = null;
  #leading = false;
  #stopped = false;

  constructor(
    private readonly runtime: SluiceRuntime,
    readonly options: ResolvedMaintenanceOptions,
  ) {
    if (!cron.validate(options.schedule)) {
      throw new OptionsError('schedule', `is not a valid cron expression: ${JSON.stringify(options.schedule)}`);
    }
    this.#lease = new LeaderLease(
      runtime.db,
      runtime.tables,
      MAINTENANCE_LEASE,
      this.holder,
      options.leaseMs,
      options.clock,
    );
    this.#tasks = tasksOf(runtime, options, this.holder);
  }

  /** Whether this process holds the leader lease now (only the leader runs the passes' tasks). */
  get leading(): boolean {
    return this.#leading;
  }

  /**
   * The tasks a pass runs, in order: `npm run bench -- shape` measures each one's runOnce() alone.
   * @internal
   */
  get tasks(): ReturnType<typeof tasksOf> {
    return this.#tasks;
  }

  /**
   * Starts the passes on the cron `schedule` and, with a jobs folder, the recurring jobs' scheduler.
   * @throws `JobDefinitionError` when a file of the jobs folder is not a job definition.
   * @throws `SchemaVersionError` when the tables are not migrated to this version.
   */
  async start(): Promise<void> {
    await assertSchemaCurrent(this.runtime.db, this.runtime.tables);
    await this.runtime.retention.load();
    if (this.options.jobs !== null) {
      const definitions = [...(await loadHandlers(this.options.jobs)).values()];
      this.#scheduler = new Scheduler(this.runtime, definitions, this.options.scheduleJitterMs);
      this.#scheduler.start();
    }
    this.#cron = cron.schedule(this.options.schedule, () => this.#tick(), {
      noOverlap: true,
      name: `sluice-maintenance-${this.holder}`,
    });
    const { jobs } = this.options;
    this.runtime.events.emit('maintenance:started', {
      holder: this.holder,
      schedule: this.options.schedule,
      jobsFolder: typeof jobs === 'string' ? resolve(jobs) : null,
      scheduled: (this.#scheduler?.scheduled ?? []).map((d) => d.name),
    });
  }

  /** One pass. Concurrent calls share the pass in progress. */
  runOnce(): Promise<MaintenancePass> {
    const catchingUp = this.#catchingUp;
    this.#pass ??= (async () => {
      await catchingUp?.catch(() => undefined);
      return this.#runPass();
    })().finally(() => {
      this.#pass = null;
    });
    return this.#pass;
  }

  /** Stops the schedule, lets a pass in progress finish and gives up the lease if it leads (another process takes over at once). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#catchUp);
    await this.#cron?.destroy();
    await this.#scheduler?.stop();
    await this.#pass?.catch(() => undefined);
    await this.#catchingUp?.catch(() => undefined);
    if (this.#leading) {
      await this.#lease.release().catch(() => undefined);
      this.#setLeading(false, true);
    }
  }

  async #tick(): Promise<void> {
    await sleep(Math.random() * this.options.jitterMs);
    if (this.#stopped) return;
    try {
      await this.runOnce();
    } catch (error) {
      this.runtime.events.emit('maintenance:error', { holder: this.holder, error: error as Error, context: 'pass' });
    }
  }

  /**
   * After a pass in which a retention task stopped behind, and while this process runs on its
   * schedule: a short catch-up pass of only the tasks behind, after a jittered pause as long as the
   * pass took (at least 200 ms), renewing the lease first; again after it while any is still behind.
   */
  #catchUpIfBehind(pass: MaintenancePass): void {
    if (pass.behind.length === 0 || this.#cron === undefined || this.#stopped || this.#catchUp !== undefined) return;
    this.#catchUp = setTimeout(
      () => {
        this.#catchUp = undefined;
        // A full pass in progress runs the retention tasks anyway.
        if (this.#stopped || this.#pass !== null) return;
        this.#catchingUp = this.#runPass(true).finally(() => {
          this.#catchingUp = null;
        });
        this.#catchingUp.catch((error: unknown) =>
          this.runtime.events.emit('maintenance:error', {
            holder: this.holder,
            error: error as Error,
            context: 'catch-up',
          }),
        );
      },
      Math.max(CATCH_UP_PAUSE_MS, pass.durationMs) * (0.5 + Math.random()),
    );
  }

  async #runPass(catchUp = false): Promise<MaintenancePass> {
    const started = performance.now();
    // Reads first, leader or not: what a take-over needs, and read before the lease write, which
    // on Galera stalls for seconds while a lost node is evicted — the stall then counts towards
    // the dead workers' silence instead of delaying the first sight of it.
    let leader: boolean;
    try {
      if (!catchUp) for (const task of this.#tasks) await task.observe?.();
      await this.runtime.retention.load();
      leader = await this.#lease.acquire();
    } catch (error) {
      this.#setLeading(false);
      throw error;
    }
    this.#setLeading(leader);
    const due = catchUp ? this.#tasks.filter((task) => task.behind) : this.#tasks;
    const { passBudgetMs, clock } = this.options;
    const run = leader ? await runWithinBudget(due, passBudgetMs, clock, () => this.#lease.valid) : null;
    const tasks = run?.counts ?? {};
    // What the dashboard's maintenance health shows: each task this pass ran, in one statement.
    if (run) await recordTaskRuns(this.runtime.db, this.runtime.tables, this.holder, run.runs);
    const pass: MaintenancePass = {
      leader,
      durationMs: Math.round(performance.now() - started),
      changed: totalChanged(tasks),
      tasks: tasks as MaintenanceCounts,
      behind: leader ? due.filter((task) => task.behind).map((task) => task.name) : [],
    };
    this.runtime.events.emit('maintenance:completed', { holder: this.holder, ...pass });
    this.#catchUpIfBehind(pass);
    return pass;
  }

  #setLeading(leading: boolean, released = false): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    if (leading) this.runtime.events.emit('leader:acquired', { holder: this.holder, lease: MAINTENANCE_LEASE });
    else this.runtime.events.emit('leader:lost', { holder: this.holder, lease: MAINTENANCE_LEASE, released });
  }
}
