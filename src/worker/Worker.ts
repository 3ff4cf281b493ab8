import { resolve } from 'node:path';
import { assertSchemaCurrent } from '../db/migrate.ts';
import { isTransientConflict } from '../db/mysqlErrors.ts';
import type { JobDefinition } from '../defineJob.ts';
import { OptionsError, PermanentJobError } from '../errors.ts';
import { type JobRow, jobFromRow } from '../job.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { type AttemptDeps, attemptJob } from './attemptJob.ts';
import { ClaimTokens } from './ClaimTokens.ts';
import { CompletionBuffer } from './CompletionBuffer.ts';
import { ConcurrencyLimit } from './ConcurrencyLimit.ts';
import { claimRandomHead } from './claims/claimRandomHead.ts';
import { claimSkipLocked } from './claims/claimSkipLocked.ts';
import { releaseClaims } from './claims/releaseClaims.ts';
import { type FinishDeps, finishJob } from './finishJob.ts';
import { Heartbeat } from './Heartbeat.ts';
import { loadHandlers } from './loadHandlers.ts';
import { QueuePriorities, samePriorities } from './QueuePriorities.ts';
import { groupByClaim, RunningJob } from './RunningJob.ts';
import { WorkerEvents } from './WorkerEvents.ts';
import type { ResolvedWorkerOptions } from './workerOptions.ts';

/**
 * A worker process's claimer and slots.
 *
 *   new ──start()──▶ running ──stop()──▶ stopping ──▶ stopped
 *
 * running:  one claim loop fills all free slots at once (one claimer per worker, never one per
 *           slot); each claimed job is a RunningJob (its own state machine) that runs
 *           attemptJob → finishJob; a Heartbeat extends the claims of running jobs, adapts the
 *           concurrency limit to the host's load, and keeps the worker's registry row fresh.
 * stopping: no more claims; running jobs get shutdownTimeoutMs to finish; what still holds its
 *           claim is released (fenced), completions are flushed, then stopped. stop() is
 *           idempotent; forceStop() skips the wait and aborts handlers' signals.
 */
export class Worker {
  readonly id: string;
  readonly #tokens = new ClaimTokens();
  readonly #running = new Set<RunningJob>();
  readonly #waiters = new Set<() => void>();
  readonly #report: WorkerEvents;
  readonly #limit: ConcurrencyLimit;
  readonly #completions: CompletionBuffer;
  readonly #priorities: QueuePriorities;
  readonly #heartbeat: Heartbeat;
  #deps: (AttemptDeps & FinishDeps) | undefined;
  #state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  #loop: Promise<void> = Promise.resolve();
  #claimLatencyMs: number | null = null;
  #stopping: Promise<void> | undefined;
  #forced = false;
  #processed = 0;

  constructor(
    private readonly runtime: SluiceRuntime,
    readonly options: ResolvedWorkerOptions,
  ) {
    this.id = this.#tokens.workerId;
    this.#report = new WorkerEvents(runtime.events, this.id);
    this.#limit = new ConcurrencyLimit(options.concurrency, options.loadPolicy, () => this.#wake());
    this.#completions = new CompletionBuffer(runtime, this.#report, options.lockTimeoutMs, () => this.#wake());
    this.#priorities = new QueuePriorities(runtime.workerDb, runtime.tables, options.pollIntervalMs);
    this.#heartbeat = new Heartbeat(runtime, options, this.#report, this.#limit, {
      running: () => this.#running,
      processed: () => this.#processed,
      claimLatencyMs: () => this.#claimLatencyMs,
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

  get state(): string {
    return this.#state;
  }

  get inFlight(): number {
    return this.#running.size;
  }

  get processed(): number {
    return this.#processed;
  }

  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`worker ${this.id} was already started`);
    await assertSchemaCurrent(this.runtime.workerDb, this.runtime.tables);
    const handlers = await loadHandlers(this.options.jobs);
    assertPoolFits([...handlers.values()], this.options.concurrency, this.runtime.options.poolMax);
    const maxRetriesOf = (r: RunningJob) =>
      r.job.maxRetries ?? handlers.get(r.job.name)?.maxRetries ?? this.options.maxRetries;
    this.#deps = {
      runtime: this.runtime,
      handlers,
      completions: this.#completions,
      report: this.#report,
      backoff: this.options.backoff,
      maxRetriesOf,
      loggerOf: (r) => this.runtime.logger.child({ jobId: r.job.id, job: r.job.name }),
      jobTimeoutMs: this.options.jobTimeoutMs,
    };
    await this.#heartbeat.start();
    this.#state = 'running';
    const { jobs } = this.options;
    const jobsFolder = typeof jobs === 'string' ? resolve(jobs) : null;
    this.#report.started(this.options.queues, this.options.concurrency, this.options.claim, jobsFolder, [
      ...handlers.keys(),
    ]);
    this.#loop = this.#claimLoop();
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
   * The one claimer: fills free slots across the queues (in turn); after a full claim it waits
   * for half a batch of free slots; after an empty poll it sleeps, longer after each (up to
   * maxPollIntervalMs), so an idle fleet costs the database little.
   */
  async #claimLoop(): Promise<void> {
    const { claimBatchSize, queues, pollIntervalMs, maxPollIntervalMs } = this.options;
    let nextQueue = 0;
    let lastWasFull = false;
    let pollDelayMs = pollIntervalMs;
    while (this.#state === 'running') {
      const limit = this.#limit.current;
      const free = limit - this.#running.size;
      const threshold = lastWasFull ? Math.max(1, Math.floor(Math.min(claimBatchSize, limit) / 2)) : 1;
      if (free < threshold || this.#completions.backlog > 2 * limit) {
        await this.#idle(pollIntervalMs);
        continue;
      }
      let requested = 0;
      let claimed = 0;
      try {
        for (let i = 0; i < queues.length && claimed < free; i++) {
          const queue = queues[(nextQueue + i) % queues.length] as string;
          const want = Math.min(free - claimed, claimBatchSize);
          requested += want;
          const rows = await this.#claim(queue, want);
          claimed += rows.length;
          for (const row of rows) this.#run(row);
        }
        nextQueue = (nextQueue + 1) % queues.length;
      } catch (error) {
        // A claim that still conflicted after the Executor's re-runs (on Galera: other nodes took
        // the same rows first) claimed nothing, and no job is affected: the next round is its retry.
        if (!isTransientConflict(error)) this.#report.error(error, 'claiming');
        await this.#idle(jittered(pollIntervalMs));
        continue;
      }
      lastWasFull = claimed > 0 && claimed === requested;
      pollDelayMs = nextPollDelayMs(pollDelayMs, claimed > 0, pollIntervalMs, maxPollIntervalMs);
      if (claimed === 0) await this.#idle(jittered(pollDelayMs));
    }
  }

  /**
   * Claims up to `want` jobs of one queue. A claim that found nothing refreshes the priority set
   * and tries once more (a partial claim does not: under contention that would re-read the set on
   * almost every claim; the set is re-read every pollIntervalMs anyway).
   */
  async #claim(queue: string, want: number): Promise<JobRow[]> {
    const cached = await this.#priorities.get(queue);
    const rows = await this.#claimWith(queue, want, cached);
    if (rows.length === 0) {
      const fresh = await this.#priorities.refresh(queue);
      if (!samePriorities(fresh, cached)) rows.push(...(await this.#claimWith(queue, want - rows.length, fresh)));
    }
    return rows;
  }

  async #claimWith(queue: string, want: number, priorities: readonly number[]): Promise<JobRow[]> {
    if (priorities.length === 0) return [];
    const { workerDb: db, tables } = this.runtime;
    const lockId = this.#tokens.next();
    const started = performance.now();
    const rows =
      this.options.claim === 'skip-locked'
        ? await claimSkipLocked(db, tables, { queue, priorities, want, lockId })
        : await claimRandomHead(db, tables, { queue, priorities, want, lockId, headSize: this.options.headSize });
    const latencyMs = performance.now() - started;
    this.#claimLatencyMs = this.#claimLatencyMs === null ? latencyMs : 0.8 * this.#claimLatencyMs + 0.2 * latencyMs;
    if (rows.length > 0) this.#report.claimed(lockId, queue, rows.length, this.options.claim);
    return rows;
  }

  /**
   * Runs one claimed job in its slot: attempt, then record the outcome. The slot frees when that
   * is done and the handler itself settled (a timed-out handler that ignores its signal keeps it).
   */
  #run(row: JobRow): void {
    const running = runningJobOf(row);
    const deps = this.#deps as AttemptDeps & FinishDeps;
    // This process may claim a job again while an earlier attempt of it still runs here (its claim
    // was taken back during a stall, and the handler ignores its aborted signal): the new attempt
    // waits for that one to settle, so one process never runs a job twice at once.
    const earlier = [...this.#running].filter((r) => r.job.id === running.job.id);
    this.#running.add(running);
    void Promise.all(earlier.map((r) => r.settled()))
      .then(() => attemptJob(deps, running))
      .then((outcome) => finishJob(deps, running, outcome))
      .catch((error: unknown) => this.#report.error(error, `running job ${running.job.id}`))
      .then(() => running.settled())
      .finally(() => {
        this.#running.delete(running);
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
    const deadline = Date.now() + this.options.shutdownTimeoutMs;
    while (this.#running.size > 0 && !this.#forced && Date.now() < deadline) {
      await this.#idle(Math.min(250, deadline - Date.now()));
    }
    const released = await this.#releaseHeld();
    await this.#completions.drain();
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
    let released = 0;
    for (const [lockId, group] of groupByClaim(toRelease)) {
      const ids = group.map((r) => r.job.id);
      try {
        const count = await releaseClaims(this.runtime.workerDb, this.runtime.tables, lockId, ids);
        released += count;
        if (count < ids.length) this.#report.claimLost('release', lockId, ids, ids.length - count);
      } catch (error) {
        this.#report.error(error, 'releasing claims at stop');
      }
    }
    return released;
  }

  /** Waits up to `ms`, or until a slot frees or stop is called. */
  #idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#waiters.add(done);
    });
  }

  #wake(): void {
    for (const waiter of [...this.#waiters]) waiter();
  }
}

/** A claimed row as a RunningJob; a payload that is not JSON (written around sluice) fails the job permanently. */
function runningJobOf(row: JobRow): RunningJob {
  try {
    return new RunningJob(jobFromRow(row));
  } catch (error) {
    const payloadError = new PermanentJobError(
      `payload of job ${row.id} is not valid JSON: ${(error as Error).message}`,
    );
    return new RunningJob(jobFromRow({ ...row, payload: 'null' }), payloadError);
  }
}

/**
 * An exactly-once job holds a connection of the install's pool for its whole run (its handler
 * runs inside the transaction that removes it): with fewer connections than jobs at once, the
 * rest wait for one, past their timeouts. Refused at start, with the fix.
 */
function assertPoolFits(definitions: readonly JobDefinition<any>[], concurrency: number, poolMax: number): void {
  const exactlyOnce = definitions.filter((d) => d.delivery === 'exactly-once').map((d) => d.name);
  if (exactlyOnce.length === 0 || poolMax >= concurrency) return;
  throw new OptionsError(
    'concurrency',
    `${concurrency} jobs at once, and exactly-once jobs (${exactlyOnce.slice(0, 3).join(', ')}) each hold a connection ` +
      `for their whole run, but the pool has ${poolMax}: raise poolMax (createSluice) to at least ${concurrency}, or lower concurrency`,
  );
}

/** ±25 % so that a fleet started together does not poll in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.75 + Math.random() * 0.5));
}

/** Pure: the next idle poll delay — doubled after each empty poll, up to the maximum; reset after a claim. */
export function nextPollDelayMs(
  current: number,
  claimed: boolean,
  pollIntervalMs: number,
  maxPollIntervalMs: number,
): number {
  if (claimed) return pollIntervalMs;
  return Math.min(maxPollIntervalMs, Math.max(pollIntervalMs, current * 2));
}
