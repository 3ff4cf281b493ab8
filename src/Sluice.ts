import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { type BatchesApi, batchesApi } from './api/batchesApi.ts';
import { type DeadJobsApi, deadJobsApi } from './api/deadJobsApi.ts';
import { type HistoryApi, historyApi } from './api/historyApi.ts';
import { type JobsApi, jobsApi } from './api/jobsApi.ts';
import { DEPTH_MAX_DEFAULT, type QueueStats, type QueuesApi, queuesApi } from './api/queuesApi.ts';
import type { SluiceApi } from './api/SluiceApi.ts';
import { type SchedulesApi, schedulesApi } from './api/schedulesApi.ts';
import { type SettingsApi, settingsApi } from './api/settingsApi.ts';
import { type WorkersApi, workersApi } from './api/workersApi.ts';
import type { BatchStatus } from './batches/getBatch.ts';
import { createDashboard, type DashboardHandler } from './dashboard/createDashboard.ts';
import type { DashboardOptions } from './dashboard/dashboardOptions.ts';
import { connect, resolveUrl } from './db/connect.ts';
import { connectionsHeld } from './db/connectionsHeld.ts';
import { explainFailure } from './db/explainFailure.ts';
import { migrate } from './db/migrate.ts';
import { redactUrl } from './db/redactUrl.ts';
import type { ServerInfo } from './db/serverInfo.ts';
import { tablesFor } from './db/tables.ts';
import { enqueueArguments } from './enqueue/enqueueArguments.ts';
import {
  type EnqueueBatchOptions,
  type EnqueueBatchResult,
  type EnqueueOptions,
  enqueueBatch,
} from './enqueue/enqueueBatch.ts';
import { type EnqueueResult, enqueueJob } from './enqueue/enqueueJob.ts';
import { type EnqueueStreamOptions, type EnqueueStreamResult, enqueueStream } from './enqueue/enqueueStream.ts';
import { SluiceEvents } from './events.ts';
import { createLogger, subscribeLogger } from './logging.ts';
import { Maintenance } from './maintenance/Maintenance.ts';
import { type MaintenanceOptions, resolveMaintenanceOptions } from './maintenance/maintenanceOptions.ts';
import type { JobDefinition, JobFields, PayloadOf } from './model/defineJob.ts';
import type { JobSpec } from './model/job.ts';
import { openRuntime } from './openRuntime.ts';
import { resolveSluiceOptions, type SluiceOptions } from './options.ts';
import { givenRetention } from './settings/InstallRetention.ts';
import type { SluiceRuntime } from './sluiceRuntime.ts';
import { Worker } from './worker/Worker.ts';
import { resolveWorkerOptions, type WorkerOptions } from './worker/workerOptions.ts';

/** One sluice install (a table prefix in one database), and the pool that reaches it. */
export class Sluice implements SluiceApi {
  /** The install's typed events (`job:completed`, `job:dead`, …): docs/jobs.md "Events". */
  readonly events = new SluiceEvents();
  readonly logger: Logger;
  /** The knex sluice uses: the app's own when it passed one, else sluice's pool. */
  readonly knex: Knex;
  readonly #runtime: SluiceRuntime;
  readonly #ownsKnex: boolean;
  /** The small pools of workers' own statements, read-ahead and the ringer (sluice's own pools only). */
  readonly #controlKnex: Knex[];
  readonly #url: string | null;
  #closing: Promise<void> | undefined;

  /**
   * An install: opens no connection until the first call (`createSluice` does the same).
   * @throws `OptionsError` for a bad or unknown option.
   */
  constructor(options: SluiceOptions = {}) {
    const resolved = resolveSluiceOptions(options);
    const tables = tablesFor(resolved.tablePrefix);
    this.logger =
      options.logger ??
      createLogger({
        redact: resolved.logRedact,
        ...(options.logLevel === undefined ? {} : { level: options.logLevel }),
      });
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
    const opened = openRuntime({
      knex: this.knex,
      ownsKnex: this.#ownsKnex,
      url: this.#url,
      resolved,
      givenRetention: givenRetention(options),
      tables,
      events: this.events,
      logger: this.logger,
    });
    this.#runtime = opened.runtime;
    this.#controlKnex = opened.controlKnex;
    const db = this.#runtime.db;
    const guard = <T>(fn: () => Promise<T>) => this.#guard(fn);
    this.jobs = jobsApi(this.#runtime, guard);
    this.queues = queuesApi(db, tables, guard, this.#runtime);
    this.batches = batchesApi(db, tables, guard);
    this.deadJobs = deadJobsApi(this.#runtime, guard);
    this.workers = workersApi(db, tables, guard);
    this.history = historyApi(db, tables, guard);
    this.schedules = schedulesApi(db, tables, guard, resolved.maxPayloadBytes);
    this.settings = settingsApi(db, tables, guard);
  }

  /** Every job, wherever it is (live, history, dead): look up, list, count, cancel, run now, wait for. */
  readonly jobs: JobsApi;
  /** The queues: names, depth (bounded index reads), pause and resume. */
  readonly queues: QueuesApi;
  /** Submitted batches and their counts. */
  readonly batches: BatchesApi;
  /** Dead jobs: list (paged), re-drive into the live queue, or purge — each filtered. */
  readonly deadJobs: DeadJobsApi;
  /** The worker registry (`workers.list()`): one row per live worker, with its load, counts and heartbeat age. */
  readonly workers: WorkersApi;
  /** What finished lately: throughput per interval and per queue. */
  readonly history: HistoryApi;
  /**
   * Run-time schedules (upsert, remove, pause, resume, list paged, runs) and the recurring jobs of
   * job definitions (`schedules.files(jobs)`), with their next and last slot.
   */
  readonly schedules: SchedulesApi;
  /** The install-wide settings every process follows (the history and dead-job retentions). */
  readonly settings: SettingsApi;

  /** The URL in use, password masked (null when the app passed its own knex). */
  get url(): string | null {
    return this.#url && redactUrl(this.#url);
  }

  /** The install's table names (its `tablePrefix` applied), for an app's own reads. */
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
   * Resolves to the job's id, and whether it was a duplicate, throttled or debounced (then no new job was written).
   * @throws `JobValidationError` naming the field; nothing is written.
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
    return this.#guard(() => enqueueJob(this.#runtime, ...enqueueArguments(jobOrDefinition, second, fields, options)));
  }

  /**
   * Enqueues jobs as one all-or-nothing batch (one transaction, or the app's `trx`): every job is
   * written, or none. Resolves to the batch id, how many were written and how many were skipped as
   * duplicates of an idempotency key.
   * @throws `JobValidationError` naming the job's index and field; nothing of the batch is written.
   * @throws `BatchTooLargeError` when the server refused the transaction as too large (Galera); nothing written.
   */
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

  /** A worker (not started): `await worker.start()`, later `await worker.stop()`. */
  worker(options: WorkerOptions = {}): Worker {
    return new Worker(this.#runtime, resolveWorkerOptions(options));
  }

  /** The maintenance process (not started): `start()` on its cron schedule, or `runOnce()` for one pass. */
  maintenance(options: MaintenanceOptions = {}): Maintenance {
    return new Maintenance(this.#runtime, resolveMaintenanceOptions(options));
  }

  /**
   * The web dashboard as a Node request handler to mount under `basePath` in an http, Express or
   * Fastify server: `auth` is required (a hook such as basicAuth(), or false); see src/dashboard/.
   */
  dashboard(options: DashboardOptions): DashboardHandler {
    return createDashboard(this, options);
  }

  /** @deprecated Use `sluice.batches.get(batchId)`. */
  batch(batchId: number): Promise<BatchStatus | null> {
    return this.batches.get(batchId);
  }

  /** @deprecated Use `sluice.queues.pause(queue)`. */
  pauseQueue(queue: string): Promise<void> {
    return this.queues.pause(queue);
  }

  /** @deprecated Use `sluice.queues.resume(queue)`. */
  resumeQueue(queue: string): Promise<void> {
    return this.queues.resume(queue);
  }

  /** @deprecated Use `sluice.queues.paused()`, which pages (this returns the first 1,000). */
  pausedQueues(): Promise<{ queue: string; pausedAt: Date }[]> {
    return this.queues.paused();
  }

  /**
   * @deprecated Use `sluice.queues.depth()`: the same counts from bounded index reads, with whether
   * each is exact. Each count here now stops at 10,000 (it read the whole live table before).
   */
  async stats(): Promise<QueueStats[]> {
    const rows = await this.queues.depth({ max: DEPTH_MAX_DEFAULT });
    return rows.map((row) => ({
      queue: row.queue,
      ready: row.ready.count,
      delayed: row.notDue.count,
      running: row.running.count,
      dead: row.dead.count,
      oldestReadyMs: row.oldestReadyMs,
    }));
  }

  /** The server's flavour (MySQL or MariaDB), version and `max_allowed_packet`: read once, then cached. */
  serverInfo(): Promise<ServerInfo> {
    return this.#guard(() => this.#runtime.serverInfo());
  }

  /** Closes the pool sluice opened (an app's own knex is left open). Idempotent. */
  close(): Promise<void> {
    // The lane's connection first: a pool waits for every connection lent out before it is destroyed.
    this.#runtime.writeLane?.close();
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

  /**
   * Re-throws a failure, thrown or rejected, as the error a user can act on (see explainFailure).
   * Not an async function: a single enqueue's promise is the operation's own plus one catch.
   */
  #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return fn().catch((error: unknown) => Promise.reject(this.#explain(error)));
    } catch (error) {
      return Promise.reject(this.#explain(error));
    }
  }

  #explain(error: unknown): unknown {
    return explainFailure(
      this.#url,
      error,
      connectionsHeld([...(this.#ownsKnex ? [this.knex] : []), ...this.#controlKnex]),
    );
  }
}

/**
 * An install (a table prefix in one database) and the pool that reaches it: `new Sluice(options)`.
 * @throws `OptionsError` for a bad or unknown option.
 */
export function createSluice(options: SluiceOptions = {}): Sluice {
  return new Sluice(options);
}
