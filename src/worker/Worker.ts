import { resolve } from 'node:path';
import { assertSchemaCurrent } from '../db/migrate.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { Doorbell } from '../wakeups/Doorbell.ts';
import { onLocalRing } from '../wakeups/localRing.ts';
import { type AttemptDeps, attemptJob } from './attemptJob.ts';
import { attemptSpan } from './attemptSpan.ts';
import { ClaimLoop, type TracedClaim } from './ClaimLoop.ts';
import { ClaimTokens } from './ClaimTokens.ts';
import { CompletionBuffer } from './CompletionBuffer.ts';
import { ConcurrencyLimit } from './ConcurrencyLimit.ts';
import type { ClaimedRow } from './claims/claimedRow.ts';
import { FairGroupSettler } from './FairGroupSettler.ts';
import { type FinishDeps, finishJob } from './finishJob.ts';
import { Heartbeat } from './Heartbeat.ts';
import { assertHasHandlers, loadHandlers } from './loadHandlers.ts';
import { type RunningJob, runningJobOf } from './RunningJob.ts';
import { releaseJobs } from './releaseJobs.ts';
import { WorkerCounters } from './WorkerCounters.ts';
import { WorkerEvents } from './WorkerEvents.ts';
import { waitingPlace } from './waitingPlace.ts';
import { assertPoolFits, type ResolvedWorkerOptions } from './workerOptions.ts';

/** How long a job claimed ahead may wait for a slot before the slots' drain rate decides whether to keep it. */
const SHED_AFTER_MS = 2_000;

/**
 * A worker process's claimer and slots.
 *
 *   new ──start()──▶ running ──stop()──▶ stopping ──▶ stopped
 *
 * running:  one claim loop fills all free slots at once (one claimer per worker, never one per
 *           slot); each claimed job is a RunningJob (its own state machine) that runs
 *           attemptJob → finishJob, at once or, claimed ahead (ClaimLoop), when a slot frees; a
 *           Heartbeat extends the claims of every job held (waiting ones too), adapts the
 *           concurrency limit to the host's load, and keeps the worker's registry row fresh.
 * stopping: no more claims; jobs claimed ahead are released (fenced) at once; running jobs get
 *           shutdownTimeoutMs to finish; what still holds its claim is released, completions are
 *           flushed, then stopped. stop() is idempotent; forceStop() skips the wait and aborts
 *           handlers' signals.
 */
export class Worker {
  /** This process's worker id (`<host>-<pid>~<random>`): its registry row and the holder of its claims. */
  readonly id: string;
  readonly #tokens = new ClaimTokens();
  /** Every job held: started, and claimed ahead (#waiting). */
  readonly #running = new Set<RunningJob>();
  /** Jobs claimed ahead of the slots, in claim order: started as slots free, released at a stop. */
  readonly #waiting: RunningJob[] = [];
  /** How many of #running carry each job id (more than one only after a claim taken back during a stall). */
  readonly #runningIds = new Map<number, number>();
  readonly #report: WorkerEvents;
  readonly #limit: ConcurrencyLimit;
  readonly #completions: CompletionBuffer;
  readonly #fairGroups: FairGroupSettler;
  readonly #claims: ClaimLoop;
  readonly #heartbeat: Heartbeat;
  #doorbell: Doorbell | null = null;
  #unsubscribe: () => void = () => undefined;
  #deps: (AttemptDeps & FinishDeps) | undefined;
  #state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  #loop: Promise<void> = Promise.resolve();
  #stopping: Promise<void> | undefined;
  #forced = false;
  #processed = 0;

  constructor(
    private readonly runtime: SluiceRuntime,
    readonly options: ResolvedWorkerOptions,
  ) {
    this.id = this.#tokens.workerId;
    this.#report = new WorkerEvents(runtime.events, this.id, new WorkerCounters(options.metricsMaxNames));
    this.#limit = new ConcurrencyLimit(options.concurrency, options.loadPolicy, () => this.#wake());
    this.#fairGroups = new FairGroupSettler(runtime, this.#report, options.fairSettleIntervalMs);
    this.#completions = new CompletionBuffer(
      runtime,
      this.#report,
      this.#fairGroups,
      options.lockTimeoutMs,
      () => this.#wake(),
      (queue) => this.#claims.limited(queue),
    );
    this.#claims = new ClaimLoop(runtime, options, this.#tokens, this.#limit, this.#completions, this.#report, {
      claiming: () => this.#state === 'running',
      inFlight: () => this.#running.size,
      processed: () => this.#processed,
      shed: (keep) => this.#shed(keep),
      run: (row, claimSize, traced) => this.#run(row, claimSize, traced),
      fairIdleCapMs: () => this.#fairGroups.idleCapMs(),
      knows: (name) => this.#deps?.handlers.has(name) === true,
    });
    this.#heartbeat = new Heartbeat(runtime, options, this.#report, this.#limit, {
      running: () => this.#running,
      processed: () => this.#processed,
      claimLatencyMs: () => this.#claims.claimLatencyMs,
      jobNames: () => [...(this.#deps?.handlers.keys() ?? [])],
    });
  }

  /** This worker's stable name (options.name): its label in metrics. */
  get name(): string {
    return this.options.name;
  }

  /** Jobs this worker runs at once right now (load-aware; at most `concurrency`). */
  get concurrencyLimit(): number {
    return this.#limit.current;
  }

  /** `new`, `running`, `stopping` or `stopped`. */
  get state(): string {
    return this.#state;
  }

  /** Jobs started and not yet done (jobs claimed ahead and waiting for a slot are not counted). */
  get inFlight(): number {
    return this.#running.size - this.#waiting.length;
  }

  /** Attempts this worker has run to their end (whatever the outcome) since it started. */
  get processed(): number {
    return this.#processed;
  }

  /**
   * Loads the handlers, registers the worker and starts claiming; resolves once it runs.
   * @throws `JobDefinitionError` when a file of the jobs folder is not a job definition (or two define one name).
   * @throws `SchemaVersionError` when the tables are not migrated to this version.
   */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`worker ${this.id} was already started`);
    await assertSchemaCurrent(this.runtime.workerDb, this.runtime.tables);
    await this.runtime.retention.load();
    const handlers = await loadHandlers(this.options.jobs);
    await assertHasHandlers(this.options.jobs, handlers);
    assertPoolFits([...handlers.values()], this.options.concurrency, this.runtime.options.poolMax);
    const maxRetriesOf = (r: RunningJob) =>
      r.job.maxRetries ?? handlers.get(r.job.name)?.maxRetries ?? this.options.maxRetries;
    this.#deps = {
      runtime: this.runtime,
      handlers,
      completions: this.#completions,
      fairGroups: this.#fairGroups,
      report: this.#report,
      backoff: this.options.backoff,
      maxRetriesOf,
      limited: (queue) => this.#claims.limited(queue),
      loggerOf: (r) => this.runtime.logger.child({ jobId: r.job.id, job: r.job.name }),
      jobTimeoutMs: this.options.jobTimeoutMs,
      progressDropped: (r, reason) => this.#report.progressDropped(r.job, reason),
    };
    await this.#heartbeat.start();
    this.#state = 'running';
    const { jobs } = this.options;
    const jobsFolder = typeof jobs === 'string' ? resolve(jobs) : null;
    this.#report.started(this.options.queues, this.options.concurrency, this.options.claim, jobsFolder, [
      ...handlers.keys(),
    ]);
    this.#listen();
    this.#loop = this.#claims.run();
  }

  /** Rings that wake the claimer: enqueues in this process, and this worker's doorbell (other processes). */
  #listen(): void {
    const { tables, doorbellKnex, events } = this.runtime;
    const ring = () => this.#claims.ring();
    this.#unsubscribe = onLocalRing(tables.prefix, this.id, this.options.queues, ring);
    // A pattern's doorbell row stands for all its queues (wakeups/patternDoorbells.ts).
    if (!doorbellKnex || !this.options.doorbell || this.options.queues.length === 0) return;
    const knex = doorbellKnex();
    this.#doorbell = new Doorbell({
      knex,
      tables,
      events,
      workerId: this.id,
      queues: this.options.queues,
      onRing: ring,
    });
    this.#doorbell.start();
  }

  /** Graceful: stop claiming, let running jobs finish (up to shutdownTimeoutMs), release the rest. */
  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  /** Like stop(), without waiting for running jobs: their signals abort and their claims are released. */
  forceStop(): Promise<void> {
    this.#forced = true;
    this.#wake();
    return this.stop();
  }

  /**
   * Holds one claimed row: started in a free slot, else waiting for one (claimed ahead), placed by
   * waitingPlace: a job of a better priority claimed later does not wait behind its queue's worse.
   */
  #run(row: ClaimedRow, claimSize: number, traced: TracedClaim | undefined): void {
    const span = traced ? attemptSpan(traced, row, this.id, this.#deps as AttemptDeps) : undefined;
    const running = runningJobOf(row, claimSize, span);
    this.#running.add(running);
    this.#waiting.splice(waitingPlace(this.#waiting, running.job), 0, running);
    this.#startWaiting();
  }

  /** Starts waiting jobs in the free slots, in line (none once stopping: a stop releases them). */
  #startWaiting(): void {
    while (this.#state === 'running' && this.#waiting.length > 0 && this.inFlight < this.#limit.current) {
      const running = this.#waiting.shift() as RunningJob;
      // Its claim was found gone while it waited (the heartbeat reported it): nothing to run.
      if (running.state === 'lost') {
        running.finish();
        running.end();
        this.#running.delete(running);
      } else this.#start(running);
    }
  }

  /**
   * Runs one held job in a slot: attempt, then record the outcome. The slot frees when that is
   * done and the handler itself settled (a timed-out handler that ignores its signal keeps it).
   * A job cancelled while it waited ends as cancelled without running (finishJob).
   */
  #start(running: RunningJob): void {
    const deps = this.#deps as AttemptDeps & FinishDeps;
    // This process may claim a job again while an earlier attempt of it still runs here (its claim
    // was taken back during a stall, and the handler ignores its aborted signal): the new attempt
    // waits for that one to settle, so one process never runs a job twice at once.
    const earlier = this.#runningIds.has(running.job.id)
      ? [...this.#running].filter((r) => r !== running && r.job.id === running.job.id)
      : [];
    this.#runningIds.set(running.job.id, (this.#runningIds.get(running.job.id) ?? 0) + 1);
    void Promise.all(earlier.map((r) => r.settled()))
      .then(() => (running.cancelled ? ({ kind: 'cancelled' } as const) : attemptJob(deps, running)))
      .then((outcome) => finishJob(deps, running, outcome))
      .catch((error: unknown) => {
        running.traceOutcome('unrecorded', error);
        running.closeSpan();
        this.#report.error(error, `running job ${running.job.id}`);
      })
      .then(() => running.settled())
      .finally(() => {
        this.#running.delete(running);
        const sameId = (this.#runningIds.get(running.job.id) ?? 1) - 1;
        if (sameId > 0) this.#runningIds.set(running.job.id, sameId);
        else this.#runningIds.delete(running.job.id);
        this.#processed++;
        this.#wake();
      });
  }

  async #shutdown(): Promise<void> {
    if (this.#state === 'new' || this.#state === 'stopped') {
      this.#state = 'stopped';
      return;
    }
    this.#state = 'stopping';
    this.#report.stopping(this.#running.size);
    this.#wake();
    await this.#loop;
    // Jobs claimed ahead never started: given back at once, without waiting for the running ones.
    let released = await this.#giveBack(this.#waiting.splice(0), 'at stop');
    this.#unsubscribe();
    const doorbell = this.#doorbell?.stop();
    const deadline = Date.now() + this.options.shutdownTimeoutMs;
    while (this.#running.size > 0 && !this.#forced && Date.now() < deadline) {
      await this.#claims.idle(Math.min(250, deadline - Date.now()));
    }
    released += await this.#releaseHeld();
    await this.#completions.drain();
    await this.#fairGroups.drain();
    await doorbell;
    await this.#heartbeat.stop();
    this.#state = 'stopped';
    this.#report.stopped(released, this.#processed);
  }

  /**
   * Gives back the claims of jobs still running at the deadline (fenced), and aborts every
   * handler still running. Jobs whose outcome is being written, or whose row is already gone,
   * have nothing to release.
   */
  async #releaseHeld(): Promise<number> {
    const stillRunning = [...this.#running];
    const toRelease = stillRunning.filter((r) => r.release());
    for (const r of stillRunning) r.cancellation.abort(new Error('worker stopped before the job finished'));
    return releaseJobs(this.runtime, this.#report, toRelease, 'at stop');
  }

  /**
   * Jobs claimed ahead beyond `keep` once the first in line waited SHED_AFTER_MS (the slots slowed
   * down: a slow job type came): the end of the line (the newest, or a queue's worst priorities)
   * goes back for other processes to run. A better job placed first by waitingPlace may put this
   * off by up to SHED_AFTER_MS.
   */
  #shed(keep: number): void {
    const first = this.#waiting[0];
    if (this.#waiting.length <= keep || !first || first.elapsedMs < SHED_AFTER_MS) return;
    void this.#giveBack(this.#waiting.splice(keep), 'claimed ahead');
  }

  async #giveBack(waiting: RunningJob[], when: string): Promise<number> {
    for (const r of waiting) this.#running.delete(r);
    return releaseJobs(
      this.runtime,
      this.#report,
      waiting.filter((r) => r.release()),
      when,
    );
  }

  #wake(): void {
    this.#startWaiting();
    this.#claims.wake();
  }
}
