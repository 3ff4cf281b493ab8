import type { SluiceContext } from '../context.ts';
import { assertSchemaCurrent } from '../db/migrate.ts';
import { retryTransient } from '../db/transaction.ts';
import type { ResolvedWorkerOptions } from '../options.ts';
import { PermanentJobError } from '../errors.ts';
import { jobFromRow, type Job, type JobDefinition, type JobRow } from '../types.ts';
import { claimRandomHead } from './claimRandomHead.ts';
import { claimSkipLocked } from './claimSkipLocked.ts';
import { Cancellation } from './Cancellation.ts';
import { ClaimTokens } from './claimToken.ts';
import { CompletionBuffer } from './CompletionBuffer.ts';
import { executeJob, type ExecuteDeps, type RunningJob } from './executeJob.ts';
import { nextPollDelayMs } from './concurrencyPolicy.ts';
import { Heartbeat } from './Heartbeat.ts';
import { QueueCounterSet } from './QueueCounterSet.ts';
import { loadHandlers } from './loadHandlers.ts';
import { QueuePriorities, samePriorities } from './queuePriorities.ts';
import { releaseClaims } from './releaseClaims.ts';

/**
 * A worker process's claimer and slots.
 *
 *   new ──start()──▶ running ──stop()──▶ stopping ──▶ stopped
 *
 * running:  one claim loop fills all free slots at once (one claimer per worker, never one per
 *           slot); a Heartbeat extends the claims of running jobs, adapts the concurrency
 *           limit to the host's load, and keeps the worker's registry row fresh.
 * stopping: no more claims; running jobs get shutdownTimeoutMs to finish; what is left is
 *           released (fenced), completions are flushed, then stopped. stop() is idempotent;
 *           forceStop() skips the wait and aborts handlers' signals.
 */
export class Worker {
  readonly id: string;
  readonly #tokens = new ClaimTokens();
  readonly #running = new Set<RunningJob>();
  readonly #waiters = new Set<() => void>();
  readonly #completions: CompletionBuffer;
  readonly #priorities: QueuePriorities;
  #handlers = new Map<string, JobDefinition<any>>();
  /** What every job's execution needs; built once at start. */
  #deps: ExecuteDeps | undefined;
  #state: 'new' | 'running' | 'stopping' | 'stopped' = 'new';
  #loop: Promise<void> = Promise.resolve();
  readonly #heartbeat: Heartbeat;
  /** Jobs at once right now: the configured concurrency, lowered by the load policy under pressure. */
  #limit: number;
  #failed = 0;
  readonly #counters: QueueCounterSet;
  #claimLatencyMs: number | null = null;
  #stopping: Promise<void> | undefined;
  #forced = false;
  #processed = 0;

  constructor(
    private readonly ctx: SluiceContext,
    readonly options: ResolvedWorkerOptions,
  ) {
    this.id = this.#tokens.workerId;
    this.#completions = new CompletionBuffer(ctx, this.id, () => this.#wake());
    this.#priorities = new QueuePriorities(ctx.db, ctx.tables, options.pollIntervalMs);
    this.#limit = options.concurrency;
    this.#counters = new QueueCounterSet(ctx.events, this.id);
    const worker = this;
    this.#heartbeat = new Heartbeat(ctx, this.id, options, {
      running: () => [...this.#running],
      isRunning: (r) => this.#running.has(r),
      counters: () => ({ processed: this.#processed, failed: this.#failed, claimLatencyMs: this.#claimLatencyMs, perQueue: this.#counters.snapshot() }),
      get limit() {
        return worker.#limit;
      },
      set limit(value: number) {
        worker.#limit = value;
        worker.#wake();
      },
    });
  }

  /** Jobs this worker runs at once right now (load-aware; at most `concurrency`). */
  get concurrencyLimit(): number {
    return this.#limit;
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
    await assertSchemaCurrent(this.ctx.db, this.ctx.tables);
    this.#handlers = await loadHandlers(this.options.jobs);
    this.#deps = {
      ctx: this.ctx,
      options: this.options,
      handlers: this.#handlers,
      completions: this.#completions,
      workerId: this.id,
      logger: this.ctx.logger,
    };
    await this.#heartbeat.start();
    this.#state = 'running';
    this.ctx.events.emit('worker:started', {
      workerId: this.id,
      queues: this.options.queues,
      concurrency: this.options.concurrency,
      strategy: this.options.claim,
    });
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
      const limit = this.#limit;
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
          for (const row of rows) this.#start(row);
        }
        nextQueue = (nextQueue + 1) % queues.length;
      } catch (error) {
        this.ctx.events.emit('worker:error', { workerId: this.id, error: error as Error, context: 'claiming' });
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
    const { db, tables } = this.ctx;
    const lockId = this.#tokens.next();
    const started = performance.now();
    const rows =
      this.options.claim === 'skip-locked'
        ? await claimSkipLocked(db, tables, { queue, priorities, want, lockId })
        : await retryTransient(() => claimRandomHead(db, tables, { queue, priorities, want, lockId, headSize: this.options.headSize }));
    const latencyMs = performance.now() - started;
    this.#claimLatencyMs = this.#claimLatencyMs === null ? latencyMs : 0.8 * this.#claimLatencyMs + 0.2 * latencyMs;
    if (rows.length > 0) {
      this.ctx.events.emit('job:claimed', { workerId: this.id, lockId, queue, count: rows.length, strategy: this.options.claim });
    }
    return rows;
  }

  #start(row: JobRow): void {
    let job: Job;
    let payloadError: Error | undefined;
    try {
      job = jobFromRow(row);
    } catch (error) {
      payloadError = new PermanentJobError(`payload of job ${row.id} is not valid JSON: ${(error as Error).message}`);
      job = jobFromRow({ ...row, payload: 'null' });
    }
    const running: RunningJob = { job, startedAt: Date.now(), cancel: new Cancellation(), abandoned: false, payloadError };
    this.#running.add(running);
    void executeJob(this.#deps as ExecuteDeps, running)
      .then((failed) => {
        if (failed) this.#failed++;
      })
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
    this.ctx.events.emit('worker:stopping', { workerId: this.id, inFlight: this.#running.size });
    this.#wake();
    await this.#loop;
    const deadline = Date.now() + this.options.shutdownTimeoutMs;
    while (this.#running.size > 0 && !this.#forced && Date.now() < deadline) {
      await this.#idle(Math.min(250, deadline - Date.now()));
    }
    let released = 0;
    for (const [lockId, group] of this.#byClaim([...this.#running])) {
      for (const r of group) {
        r.abandoned = true;
        r.cancel.abort(new Error('worker stopped before the job finished'));
      }
      // A finishing job (outcome being written, or at-most-once: row already gone) has nothing to release.
      const ids = group.filter((r) => !r.finishing).map((r) => r.job.id);
      if (ids.length === 0) continue;
      try {
        const count = await releaseClaims(this.ctx.db, this.ctx.tables, lockId, ids);
        released += count;
        if (count < ids.length) this.ctx.events.emit('claim:lost', { workerId: this.id, operation: 'release', lockId, jobIds: ids, lost: ids.length - count });
      } catch (error) {
        this.ctx.events.emit('worker:error', { workerId: this.id, error: error as Error, context: 'releasing claims at stop' });
      }
    }
    await this.#completions.drain();
    await this.#heartbeat.stop();
    this.#counters.close();
    this.#state = 'stopped';
    this.ctx.events.emit('worker:stopped', { workerId: this.id, released, processed: this.#processed });
  }

  #byClaim(running: RunningJob[]): Map<string, RunningJob[]> {
    const groups = new Map<string, RunningJob[]>();
    for (const r of running) {
      if (r.abandoned) continue;
      const group = groups.get(r.job.lockId);
      if (group) group.push(r);
      else groups.set(r.job.lockId, [r]);
    }
    return groups;
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

/** ±25 % so that a fleet started together does not poll in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.75 + Math.random() * 0.5));
}

