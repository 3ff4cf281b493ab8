import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { type BatchStatus, getBatch } from './batches/getBatch.ts';
import { createDashboard, type DashboardHandler } from './dashboard/createDashboard.ts';
import type { DashboardOptions } from './dashboard/dashboardOptions.ts';
import { connect, resolveUrl } from './db/connect.ts';
import { fromKnex } from './db/executor.ts';
import { explainFailure } from './db/explainFailure.ts';
import { migrate } from './db/migrate.ts';
import { redactUrl } from './db/redactUrl.ts';
import { readServerInfo, type ServerInfo } from './db/serverInfo.ts';
import { tablesFor } from './db/tables.ts';
import type { DeadJobFilter } from './deadJobs/deadJobFilter.ts';
import { type DeadJob, listDeadJobs } from './deadJobs/listDeadJobs.ts';
import { purgeDeadJobs } from './deadJobs/purgeDeadJobs.ts';
import { redriveDeadJobs } from './deadJobs/redriveDeadJobs.ts';
import { isJobDefinition, type JobDefinition, type JobFields, jobOf, type PayloadOf } from './model/defineJob.ts';
import {
  type EnqueueBatchOptions,
  type EnqueueBatchResult,
  type EnqueueOptions,
  enqueueBatch,
} from './enqueue/enqueueBatch.ts';
import { type EnqueueResult, enqueueJob } from './enqueue/enqueueJob.ts';
import { type EnqueueStreamOptions, type EnqueueStreamResult, enqueueStream } from './enqueue/enqueueStream.ts';
import { SluiceEvents } from './events.ts';
import type { JobSpec } from './model/job.ts';
import { type JobsApi, jobsApi } from './api/jobsApi.ts';
import { createLogger, subscribeLogger } from './logging.ts';
import { Maintenance } from './maintenance/Maintenance.ts';
import { type MaintenanceOptions, resolveMaintenanceOptions } from './maintenance/maintenanceOptions.ts';
import { resolveSluiceOptions, type SluiceOptions } from './options.ts';
import { pausedQueues, pauseQueue, resumeQueue } from './queues/pauseQueue.ts';
import { listSchedules, type ScheduleInfo } from './scheduler/listSchedules.ts';
import type { SluiceRuntime } from './sluiceRuntime.ts';
import { type QueueStats, queueStats } from './stats/queueStats.ts';
import { Ringer } from './wakeups/Ringer.ts';
import { ringAfterCommit } from './wakeups/ringAfterCommit.ts';
import { loadHandlers } from './worker/loadHandlers.ts';
import { Worker } from './worker/Worker.ts';
import { resolveWorkerOptions, type WorkerOptions } from './worker/workerOptions.ts';
import { listWorkers, type WorkerInfo } from './worker/workerRegistry.ts';

/** Connections of the pool that carries workers' claims and outcome writes (each worker writes a claim or a batch at a time). */
const WORKER_POOL_MAX = 4;

/** One sluice install (a table prefix in one database), and the pool that reaches it. */
export class Sluice {
  readonly events = new SluiceEvents();
  readonly logger: Logger;
  readonly knex: Knex;
  readonly #runtime: SluiceRuntime;
  readonly #ownsKnex: boolean;
  /** The small pools of workers' own writes and of heartbeats (sluice's own pools only). */
  readonly #controlKnex: Knex[] = [];
  readonly #url: string | null;
  #serverInfo: Promise<ServerInfo> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: SluiceOptions = {}) {
    const resolved = resolveSluiceOptions(options);
    const tables = tablesFor(resolved.tablePrefix);
    this.logger = options.logger ?? createLogger({ redact: resolved.logRedact });
    this.#ownsKnex = options.knex === undefined;
    this.#url = options.knex ? null : resolveUrl(options.url);
    this.knex =
      options.knex ??
      connect({
        url: this.#url as string,
        poolMax: resolved.poolMax,
        logger: this.logger,
        idleTransactionTimeoutMs: resolved.idleTransactionTimeoutMs,
      });
    subscribeLogger(this.events, this.logger);
    const db = fromKnex(this.knex, { readCommitted: this.#ownsKnex, foreign: !this.#ownsKnex });
    const ownPool = (poolMax: number, keep: boolean): Knex => {
      const knex = connect({
        url: this.#url as string,
        poolMax,
        logger: this.logger,
        idleTransactionTimeoutMs: resolved.idleTransactionTimeoutMs,
      });
      // One place to watch every statement sluice sends: sluice.knex's 'query' event.
      knex.on('query', (query: unknown) => this.knex.emit('query', query));
      if (keep) this.#controlKnex.push(knex);
      return knex;
    };
    const controlPool = (poolMax: number) =>
      this.#url ? fromKnex(ownPool(poolMax, true), { readCommitted: true }) : db;
    this.#runtime = {
      knex: this.knex,
      db,
      workerDb: controlPool(WORKER_POOL_MAX),
      heartbeatDb: controlPool(1),
      ringer: new Ringer({
        knex: this.#url ? ownPool(1, true) : null,
        tables,
        events: this.events,
      }),
      doorbellKnex: this.#url ? () => ownPool(2, false) : null,
      tables,
      events: this.events,
      logger: this.logger,
      options: resolved,
      serverInfo: () => (this.#serverInfo ??= readServerInfo(this.#runtime.db)),
    };
    this.jobs = jobsApi(this.#runtime, (fn) => this.#guard(fn));
  }

  /** The URL in use, password masked (null when the app passed its own knex). */
  get url(): string | null {
    return this.#url && redactUrl(this.#url);
  }

  get tables() {
    return this.#runtime.tables;
  }

  /** Applies pending migrations; returns the ones applied now. */
  async migrate(): Promise<{ applied: string[] }> {
    return this.#guard(() => migrate(this.knex, this.#runtime.tables));
  }

  /**
   * Enqueues one job: a JobSpec, or a job definition and a payload its handler takes (checked at
   * compile time), with the job's other fields after it: `sluice.enqueue(sendEmail, { to }, { delayMs: 5_000 })`.
   */
  enqueue(job: JobSpec, options?: EnqueueOptions): Promise<EnqueueResult>;
  enqueue<D extends JobDefinition<any>>(
    definition: D,
    payload: PayloadOf<D>,
    fields?: JobFields,
    options?: EnqueueOptions,
  ): Promise<EnqueueResult>;
  enqueue(
    jobOrDefinition: JobSpec | JobDefinition<any>,
    second?: unknown,
    fields?: JobFields,
    options?: EnqueueOptions,
  ): Promise<EnqueueResult> {
    const [job, enqueueOptions] = isJobDefinition(jobOrDefinition)
      ? [jobOf(jobOrDefinition, second, fields), options]
      : [jobOrDefinition, second as EnqueueOptions | undefined];
    return this.#guard(() => enqueueJob(this.#runtime, job, enqueueOptions));
  }

  enqueueBatch(jobs: readonly JobSpec[], options?: EnqueueBatchOptions): Promise<EnqueueBatchResult> {
    return this.#guard(() => enqueueBatch(this.#runtime, jobs, options));
  }

  /** Enqueues a stream of chunks with memory for one chunk; `atomic` makes it one all-or-nothing batch. */
  enqueueStream(
    chunks: AsyncIterable<readonly JobSpec[]>,
    options: EnqueueStreamOptions,
  ): Promise<EnqueueStreamResult> {
    return this.#guard(() => enqueueStream(this.#runtime, chunks, options));
  }

  /** A batch's size, pending / succeeded / dead counts and finishedAt; null if no such batch. */
  batch(batchId: number): Promise<BatchStatus | null> {
    return this.#guard(() => getBatch(this.#runtime.db, this.#runtime.tables, batchId));
  }

  /** No worker claims from a paused queue; jobs already running finish. */
  pauseQueue(queue: string): Promise<void> {
    return this.#guard(() => pauseQueue(this.#runtime.db, this.#runtime.tables, queue));
  }

  resumeQueue(queue: string): Promise<void> {
    return this.#guard(() => resumeQueue(this.#runtime.db, this.#runtime.tables, queue));
  }

  pausedQueues(): Promise<{ queue: string; pausedAt: Date }[]> {
    return this.#guard(() => pausedQueues(this.#runtime.db, this.#runtime.tables));
  }

  /** Dead jobs: list (paged), re-drive into the live queue, or purge — each filtered. */
  readonly deadJobs = {
    list: (filter?: DeadJobFilter, page?: { afterId?: number; limit?: number }): Promise<DeadJob[]> =>
      this.#guard(() => listDeadJobs(this.#runtime.db, this.#runtime.tables, filter, page)),
    redrive: (
      filter?: DeadJobFilter,
      options?: { batchSize?: number; onProgress?: (n: number) => void },
    ): Promise<{ redriven: number }> =>
      this.#guard(() =>
        redriveDeadJobs(this.#runtime.db, this.#runtime.tables, filter, {
          ...options,
          onMoved: (queues) => ringAfterCommit(this.#runtime, undefined, queues),
        }),
      ),
    purge: (filter?: DeadJobFilter, options?: { batchSize?: number }): Promise<{ purged: number }> =>
      this.#guard(() => purgeDeadJobs(this.#runtime.db, this.#runtime.tables, filter, options)),
  };

  /** Every job, wherever it is (live, history, dead): see src/jobs/jobsApi.ts. */
  readonly jobs: JobsApi;

  /** The recurring jobs among these definitions (a jobs folder or a list), with their next and last slot. */
  schedules(jobs: string | readonly JobDefinition<any>[] = 'jobs'): Promise<ScheduleInfo[]> {
    return this.#guard(async () =>
      listSchedules(this.#runtime.db, this.#runtime.tables, [...(await loadHandlers(jobs)).values()]),
    );
  }

  /** A worker (not started): `await worker.start()`, later `await worker.stop()`. */
  worker(options: WorkerOptions = {}): Worker {
    return new Worker(this.#runtime, resolveWorkerOptions(options));
  }

  /** The maintenance process (not started): `start()` on its cron schedule, or `runOnce()` for one pass. */
  maintenance(options: MaintenanceOptions = {}): Maintenance {
    return new Maintenance(this.#runtime, resolveMaintenanceOptions(options));
  }

  /** The worker registry: one row per live worker, with its load, counts and heartbeat age. */
  workers(): Promise<WorkerInfo[]> {
    return this.#guard(() => listWorkers(this.#runtime.db, this.#runtime.tables));
  }

  /**
   * The web dashboard as a Node request handler to mount under `basePath` in an http, Express or
   * Fastify server: `auth` is required (a hook such as basicAuth(), or false); see src/dashboard/.
   */
  dashboard(options: DashboardOptions): DashboardHandler {
    return createDashboard(this, this.#runtime, options);
  }

  stats(): Promise<QueueStats[]> {
    return this.#guard(() => queueStats(this.#runtime.db, this.#runtime.tables));
  }

  serverInfo(): Promise<ServerInfo> {
    return this.#guard(() => this.#runtime.serverInfo());
  }

  /** Closes the pool sluice opened (an app's own knex is left open). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#runtime.ringer
      .close()
      .then(() =>
        Promise.all([
          ...(this.#ownsKnex ? [this.knex.destroy()] : []),
          ...this.#controlKnex.map((knex) => knex.destroy()),
        ]),
      )
      .then(() => undefined);
    return this.#closing;
  }

  /** Re-throws a failure as the error a user can act on (see explainFailure). */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw explainFailure(this.#url, error);
    }
  }
}

export function createSluice(options: SluiceOptions = {}): Sluice {
  return new Sluice(options);
}
