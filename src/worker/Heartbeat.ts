import { hostname } from 'node:os';
import type { SluiceContext } from '../context.ts';
import type { ResolvedWorkerOptions } from '../options.ts';
import type { LoadReading } from '../stats/processStats.ts';
import { deregisterWorker, heartbeatWorker, registerWorker, type QueueCounters } from '../workers/workerRegistry.ts';
import { nextConcurrencyLimit } from './concurrencyPolicy.ts';
import type { RunningJob } from './executeJob.ts';
import { extendClaims } from './extendClaims.ts';

/** What the heartbeat reads from, and reports to, its worker. */
export interface HeartbeatHost {
  /** Jobs running now, their claims to extend. */
  running(): RunningJob[];
  isRunning(job: RunningJob): boolean;
  counters(): { processed: number; failed: number; claimLatencyMs: number | null; perQueue: Record<string, QueueCounters> };
  /** Current limit on jobs at once; the heartbeat may change it. */
  limit: number;
}

/**
 * A worker's heartbeat, every heartbeatIntervalMs (jittered):
 * 1. extends the claims of running jobs (fenced; a lost claim aborts its job's signal);
 * 2. adjusts the worker's concurrency limit from the host's load (concurrencyPolicy);
 * 3. refreshes the worker's registry row (host, pid, load, in-flight, counts), by which the
 *    sweeper tells a dead worker from a live one within a few heartbeats.
 * The load is sampled in the background (os-utils samples CPU over a second), so a beat never
 * waits for it.
 */
export class Heartbeat {
  #timer: NodeJS.Timeout | undefined;
  #beating: Promise<void> = Promise.resolve();
  #load: LoadReading | null = null;
  #sampling = false;
  #stopped = false;

  constructor(
    private readonly ctx: SluiceContext,
    private readonly workerId: string,
    private readonly options: ResolvedWorkerOptions,
    private readonly host: HeartbeatHost,
  ) {}

  async start(): Promise<void> {
    await this.#register();
    this.#sample();
    this.#schedule();
  }

  async #register(): Promise<void> {
    await registerWorker(this.ctx.db, this.ctx.tables, {
      id: this.workerId,
      host: hostname().slice(0, 64),
      pid: process.pid,
      queues: this.options.queues,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      concurrency: this.options.concurrency,
    });
  }

  /** Stops beating and removes the registry row. Call after the worker released its claims. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#beating;
    await deregisterWorker(this.ctx.db, this.ctx.tables, this.workerId).catch((error: unknown) =>
      this.ctx.events.emit('worker:error', { workerId: this.workerId, error: error as Error, context: 'deregistering' }),
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
    await this.#extendClaims();
    this.#adjustLimit();
    this.#sample();
    const counters = this.host.counters();
    try {
      const present = await heartbeatWorker(this.ctx.db, this.ctx.tables, this.workerId, {
        inFlight: this.host.running().length,
        processed: counters.processed,
        failed: counters.failed,
        cpu: this.#load?.cpu ?? null,
        freeMem: this.#load?.freeMem ?? null,
        concurrencyLimit: this.host.limit,
        claimLatencyMs: counters.claimLatencyMs,
        counters: counters.perQueue,
      });
      // Declared dead (e.g. after a long pause) and removed by the sweeper: come back.
      if (!present && !this.#stopped) await this.#register();
    } catch (error) {
      this.ctx.events.emit('worker:error', { workerId: this.workerId, error: error as Error, context: 'heartbeat' });
    }
  }

  async #extendClaims(): Promise<void> {
    const groups = new Map<string, RunningJob[]>();
    for (const r of this.host.running()) {
      if (r.abandoned || r.finishing || r.lost) continue;
      const group = groups.get(r.job.lockId);
      if (group) group.push(r);
      else groups.set(r.job.lockId, [r]);
    }
    for (const [lockId, snapshot] of groups) {
      // Groups are extended one after another: a job that finished meanwhile may already be
      // deleted, and a row we deleted ourselves is not a lost claim.
      const group = snapshot.filter((r) => this.host.isRunning(r) && !r.finishing);
      if (group.length === 0) continue;
      try {
        const missing = await extendClaims(this.ctx.db, this.ctx.tables, lockId, group.map((r) => r.job.id));
        const lost = group.filter((r) => missing.includes(r.job.id) && this.host.isRunning(r) && !r.finishing);
        if (lost.length === 0) continue;
        const jobIds = lost.map((r) => r.job.id);
        this.ctx.events.emit('claim:lost', { workerId: this.workerId, operation: 'extend', lockId, jobIds, lost: jobIds.length });
        for (const r of lost) {
          r.lost = true;
          r.cancel.abort(new Error(`claim ${lockId} on job ${r.job.id} was lost`));
        }
      } catch (error) {
        this.ctx.events.emit('worker:error', { workerId: this.workerId, error: error as Error, context: 'extending claims' });
      }
    }
  }

  #adjustLimit(): void {
    if (!this.#load) return;
    const next = nextConcurrencyLimit(this.host.limit, this.options.concurrency, this.#load, this.options.loadPolicy);
    if (next === this.host.limit) return;
    this.ctx.events.emit('worker:concurrency', { workerId: this.workerId, from: this.host.limit, to: next, cpu: this.#load.cpu, freeMem: this.#load.freeMem });
    this.host.limit = next;
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
