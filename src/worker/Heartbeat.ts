import { hostname } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { cancelledAmong } from '../jobControl/cancelledAmong.ts';
import { SETTINGS_MAX_AGE_MS } from '../settings/InstallRetention.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { LogBatch } from './AttemptLog.ts';
import type { ConcurrencyLimit } from './ConcurrencyLimit.ts';
import { extendClaims } from './claims/extendClaims.ts';
import { writeJobLogs } from './claims/writeJobLogs.ts';
import { writeProgress } from './claims/writeProgress.ts';
import type { LoadReading } from './hostLoad.ts';
import { groupByClaim, type RunningJob } from './RunningJob.ts';
import type { WorkerEvents } from './WorkerEvents.ts';
import type { ResolvedWorkerOptions } from './workerOptions.ts';
import { deregisterWorker, heartbeatWorker, registerWorker } from './workerRegistry.ts';

/** What the heartbeat reads from its worker. */
export interface HeartbeatSource {
  /** The jobs in the worker's slots. */
  running(): Iterable<RunningJob>;
  /** Jobs that left the slots since the worker started. */
  processed(): number;
  /** Moving average of the claim round trip, or null before the first claim. */
  claimLatencyMs(): number | null;
  /** The job names the worker has handlers for (published at registration). */
  jobNames(): readonly string[];
}

/**
 * A worker's heartbeat, every heartbeatIntervalMs (jittered):
 * 1. extends the claims of running jobs (fenced), beside the beat rather than in it, so that a
 *    row lock it waits on cannot hold the registry row still. A job whose claim is gone was either cancelled
 *    (sluice.jobs.cancel moved it to the history as cancelled: the job becomes `cancelled`, its
 *    signal aborts with JobCancelledError) or taken back by the sweeper (`lost`, its signal
 *    aborts): one history read tells them apart, only in a beat that found a claim gone. So a
 *    cancel reaches its running job within one beat, at no cost to the beats that find nothing;
 *    then writes the progress its jobs reported and the lines they logged (ctx.log) since the last
 *    beat (a statement each per claim with any, none otherwise);
 * 2. adjusts the worker's concurrency limit from the host's load (ConcurrencyLimit);
 * 3. refreshes the worker's registry row (host, pid, load, in-flight, counts), by which the
 *    maintenance process tells a dead worker from a live one within a few heartbeats; every
 *    metricsIntervalMs the same statement also carries the worker's metrics (its counters and
 *    histograms, its memory, the longest event-loop stall since the last send), so that the
 *    metrics cost no statement of their own.
 * The load is sampled in the background (os-utils samples CPU over a second), so a beat never
 * waits for it.
 */
export class Heartbeat {
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> = Promise.resolve();
  /** The claims' extension in progress, if any: it runs beside the beats, not inside them. */
  #extending: Promise<void> | null = null;
  #load: LoadReading | null = null;
  #sampling = false;
  #stopped = false;
  /** When the metrics were last written (performance.now), or -Infinity: send them with the next beat. */
  #metricsSentAt = Number.NEGATIVE_INFINITY;
  readonly #loopDelay = monitorEventLoopDelay({ resolution: 20 });

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly options: ResolvedWorkerOptions,
    private readonly report: WorkerEvents,
    private readonly limit: ConcurrencyLimit,
    private readonly source: HeartbeatSource,
  ) {}

  async start(): Promise<void> {
    this.#loopDelay.enable();
    await this.#register();
    this.#sample();
    this.#schedule();
  }

  async #register(): Promise<void> {
    await registerWorker(this.runtime.workerDb, this.runtime.tables, {
      id: this.report.workerId,
      host: hostname().slice(0, 64),
      name: this.options.name,
      pid: process.pid,
      queues: this.options.queues,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      lockTimeoutMs: this.options.lockTimeoutMs,
      concurrency: this.options.concurrency,
      jobNames: this.source.jobNames(),
    });
  }

  /** Stops beating and removes the registry row. Call after the worker released its claims. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#beating;
    await this.#extending;
    this.#loopDelay.disable();
    await deregisterWorker(this.runtime.workerDb, this.runtime.tables, this.report.workerId).catch((error: unknown) =>
      this.report.error(error, 'deregistering'),
    );
  }

  #schedule(): void {
    if (this.#stopped) return;
    const delay = this.options.heartbeatIntervalMs * (0.85 + Math.random() * 0.3);
    this.#timer = setTimeout(() => {
      this.#beating = this.#beat().finally(() => this.#schedule());
    }, delay);
  }

  async #beat(): Promise<void> {
    // The install's retentions, read again now and then (history is written only while kept):
    // never awaited, so a busy install pool cannot delay the claims' extension.
    this.runtime.retention.fresh(SETTINGS_MAX_AGE_MS).catch((error: unknown) => this.report.error(error, 'settings'));
    // Never awaited by the beat: an extension waits on its jobs' row locks (another session's, or
    // on Galera a commit of this worker's own that flow control holds back), and a registry row
    // that stood still for that long would have this live worker declared dead. One at a time.
    this.#extending ??= this.#extendClaims().finally(() => {
      this.#extending = null;
    });
    this.#adjustLimit();
    this.#sample();
    const now = performance.now();
    const metrics =
      now - this.#metricsSentAt >= this.options.metricsIntervalMs
        ? this.report.counters.snapshot(this.#loopDelay.max / 1e6)
        : null;
    try {
      const present = await heartbeatWorker(this.runtime.workerDb, this.runtime.tables, this.report.workerId, {
        inFlight: [...this.source.running()].length,
        processed: this.source.processed(),
        failed: this.report.failed,
        cpu: this.#load?.cpu ?? null,
        freeMem: this.#load?.freeMem ?? null,
        concurrencyLimit: this.limit.current,
        claimLatencyMs: this.source.claimLatencyMs(),
        counters: this.report.perQueue(),
        metrics,
        unknownJobs: this.report.unknownNames(),
      });
      if (present && metrics !== null) {
        this.#metricsSentAt = now;
        this.#loopDelay.reset();
      }
      // Declared dead (e.g. after a long pause) and removed by the maintenance process: come back,
      // and send the metrics with the next beat (the new row has none).
      if (!present && !this.#stopped) {
        this.#metricsSentAt = Number.NEGATIVE_INFINITY;
        await this.#register();
      }
    } catch (error) {
      this.report.error(error, 'heartbeat');
    }
  }

  /**
   * Extends the claims of jobs that hold one, a claim at a time, and writes their new progress.
   * A job's state is read again after each write: one that finished meanwhile (its outcome
   * written, or, exactly-once, its delete committed) is not a lost claim.
   */
  async #extendClaims(): Promise<void> {
    const held = [...this.source.running()].filter((r) => r.holdsClaim);
    for (const [lockId, snapshot] of groupByClaim(held)) {
      const group = snapshot.filter((r) => r.holdsClaim);
      if (group.length === 0) continue;
      try {
        const missing = await extendClaims(
          this.runtime.workerDb,
          this.runtime.tables,
          lockId,
          group.map((r) => r.job.id),
        );
        if (missing.length > 0) await this.#gone(lockId, group, new Set(missing));
        await this.#writeProgress(lockId, group);
        await this.#writeLogs(lockId, group);
      } catch (error) {
        this.report.error(error, 'extending claims');
      }
    }
  }

  /** Jobs whose claim the extend found gone: cancelled ones end as cancelled, the others are lost. */
  async #gone(lockId: string, group: readonly RunningJob[], missing: ReadonlySet<number>): Promise<void> {
    const gone = group.filter((r) => missing.has(r.job.id));
    const cancelled = await cancelledAmong(
      this.runtime.workerDb,
      this.runtime.tables,
      gone.map((r) => r.job.id),
    );
    for (const r of gone) if (cancelled.has(r.job.id)) r.cancel();
    const lost = gone.filter((r) => !cancelled.has(r.job.id) && r.lose());
    if (lost.length > 0)
      this.report.claimLost(
        'extend',
        lockId,
        lost.map((r) => r.job.id),
        lost.length,
      );
  }

  /** Writes the progress reported since the last beat by the jobs of one claim that still hold it. */
  async #writeProgress(lockId: string, group: readonly RunningJob[]): Promise<void> {
    const changed = new Map<number, string>();
    const taken: [RunningJob, string][] = [];
    for (const r of group) {
      if (!r.holdsClaim) continue;
      const progress = r.takeProgress();
      if (progress === undefined) continue;
      changed.set(r.job.id, progress);
      taken.push([r, progress]);
    }
    try {
      await writeProgress(this.runtime.workerDb, this.runtime.tables, lockId, changed);
    } catch (error) {
      for (const [r, progress] of taken) r.restoreProgress(progress);
      throw error;
    }
  }

  /**
   * Writes the lines logged since the last beat by the jobs of one claim that still hold it, fenced
   * like progress. A line is confirmed only once written: a failed write leaves it for the next
   * beat or the attempt's end (which may write it too: the rows are keyed, so that only rewrites it).
   */
  async #writeLogs(lockId: string, group: readonly RunningJob[]): Promise<void> {
    const taken: [RunningJob, LogBatch][] = [];
    for (const r of group) {
      const batch = r.holdsClaim ? r.pendingLogs() : null;
      if (batch) taken.push([r, batch]);
    }
    if (taken.length === 0) return;
    await writeJobLogs(
      this.runtime.workerDb,
      this.runtime.tables,
      lockId,
      taken.flatMap(([, batch]) => batch.rows),
    );
    for (const [r, batch] of taken) r.logsWritten(batch);
  }

  #adjustLimit(): void {
    if (!this.#load) return;
    const change = this.limit.adjust(this.#load);
    if (change) this.report.concurrency(change.from, change.to, this.#load);
  }

  #sample(): void {
    if (this.#sampling || this.options.loadPolicy.enabled === false) return;
    this.#sampling = true;
    this.options.loadSampler().then(
      (reading) => {
        this.#load = reading;
        this.#sampling = false;
      },
      () => {
        this.#sampling = false;
      },
    );
  }
}
