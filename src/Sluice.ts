import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { SluiceContext } from './context.ts';
import { connect, describeConnectionFailure, redactUrl, resolveUrl } from './db/connect.ts';
import { fromKnex } from './db/executor.ts';
import { ER } from './db/mysqlErrors.ts';
import { SchemaVersionError } from './errors.ts';
import { migrate } from './db/migrate.ts';
import { readServerInfo, type ServerInfo } from './db/serverInfo.ts';
import { tablesFor } from './db/tables.ts';
import { getBatch, type BatchStatus } from './batches/getBatch.ts';
import type { DeadJobFilter } from './deadJobs/deadJobFilter.ts';
import { listDeadJobs, type DeadJob } from './deadJobs/listDeadJobs.ts';
import { purgeDeadJobs } from './deadJobs/purgeDeadJobs.ts';
import { redriveDeadJobs } from './deadJobs/redriveDeadJobs.ts';
import { enqueueBatch, type EnqueueBatchOptions, type EnqueueBatchResult, type EnqueueOptions } from './enqueue/enqueueBatch.ts';
import { pausedQueues, pauseQueue, resumeQueue } from './queues/pauseQueue.ts';
import { enqueueJob, type EnqueueResult } from './enqueue/enqueueJob.ts';
import { enqueueStream, type EnqueueStreamOptions, type EnqueueStreamResult } from './enqueue/enqueueStream.ts';
import { SluiceEvents } from './events.ts';
import { createLogger, subscribeLogger } from './logging.ts';
import { Maintainer } from './maintenance/Maintainer.ts';
import {
  resolveMaintenanceOptions,
  resolveSluiceOptions,
  resolveWorkerOptions,
  type MaintenanceOptions,
  type SluiceOptions,
  type WorkerOptions,
} from './options.ts';
import { queueStats, type QueueStats } from './stats/queueStats.ts';
import type { JobSpec } from './types.ts';
import { Worker } from './worker/Worker.ts';
import { listWorkers, type WorkerInfo } from './workers/workerRegistry.ts';

/** One sluice install (a table prefix in one database), and the pool that reaches it. */
export class Sluice {
  readonly events = new SluiceEvents();
  readonly logger: Logger;
  readonly knex: Knex;
  readonly #ctx: SluiceContext;
  readonly #ownsKnex: boolean;
  readonly #url: string | null;
  #serverInfo: Promise<ServerInfo> | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: SluiceOptions = {}) {
    const resolved = resolveSluiceOptions(options);
    const tables = tablesFor(resolved.tablePrefix);
    this.logger = options.logger ?? createLogger();
    this.#ownsKnex = options.knex === undefined;
    this.#url = options.knex ? null : resolveUrl(options.url);
    this.knex = options.knex ?? connect({ url: this.#url as string, poolMax: resolved.poolMax, logger: this.logger });
    subscribeLogger(this.events, this.logger);
    this.#ctx = {
      knex: this.knex,
      db: fromKnex(this.knex, { readCommitted: this.#ownsKnex }),
      tables,
      events: this.events,
      logger: this.logger,
      options: resolved,
      serverInfo: () => (this.#serverInfo ??= readServerInfo(this.#ctx.db)),
    };
  }

  /** The URL in use, password masked (null when the app passed its own knex). */
  get url(): string | null {
    return this.#url && redactUrl(this.#url);
  }

  get tables() {
    return this.#ctx.tables;
  }

  /** Applies pending migrations; returns the ones applied now. */
  async migrate(): Promise<{ applied: string[] }> {
    return this.#guard(() => migrate(this.knex, this.#ctx.tables));
  }

  enqueue(job: JobSpec, options?: EnqueueOptions): Promise<EnqueueResult> {
    return this.#guard(() => enqueueJob(this.#ctx, job, options));
  }

  enqueueBatch(jobs: readonly JobSpec[], options?: EnqueueBatchOptions): Promise<EnqueueBatchResult> {
    return this.#guard(() => enqueueBatch(this.#ctx, jobs, options));
  }

  /** Enqueues a stream of chunks with memory for one chunk; `atomic` makes it one all-or-nothing batch. */
  enqueueStream(chunks: AsyncIterable<readonly JobSpec[]>, options: EnqueueStreamOptions): Promise<EnqueueStreamResult> {
    return this.#guard(() => enqueueStream(this.#ctx, chunks, options));
  }

  /** A batch's size, pending / succeeded / dead counts and finishedAt; null if no such batch. */
  batch(batchId: number): Promise<BatchStatus | null> {
    return this.#guard(() => getBatch(this.#ctx.db, this.#ctx.tables, batchId));
  }

  /** No worker claims from a paused queue; jobs already running finish. */
  pauseQueue(queue: string): Promise<void> {
    return this.#guard(() => pauseQueue(this.#ctx.db, this.#ctx.tables, queue));
  }

  resumeQueue(queue: string): Promise<void> {
    return this.#guard(() => resumeQueue(this.#ctx.db, this.#ctx.tables, queue));
  }

  pausedQueues(): Promise<{ queue: string; pausedAt: Date }[]> {
    return this.#guard(() => pausedQueues(this.#ctx.db, this.#ctx.tables));
  }

  /** Dead jobs: list (paged), re-drive into the live queue, or purge — each filtered. */
  readonly deadJobs = {
    list: (filter?: DeadJobFilter, page?: { afterId?: number; limit?: number }): Promise<DeadJob[]> =>
      this.#guard(() => listDeadJobs(this.#ctx.db, this.#ctx.tables, filter, page)),
    redrive: (filter?: DeadJobFilter, options?: { batchSize?: number; onProgress?: (n: number) => void }): Promise<{ redriven: number }> =>
      this.#guard(() => redriveDeadJobs(this.#ctx.db, this.#ctx.tables, filter, options)),
    purge: (filter?: DeadJobFilter, options?: { batchSize?: number }): Promise<{ purged: number }> =>
      this.#guard(() => purgeDeadJobs(this.#ctx.db, this.#ctx.tables, filter, options)),
  };

  /** A worker (not started): `await worker.start()`, later `await worker.stop()`. */
  worker(options: WorkerOptions = {}): Worker {
    return new Worker(this.#ctx, resolveWorkerOptions(options));
  }

  /** The sweeper (not started): `start()` on its cron schedule, or `runOnce()`. */
  maintenance(options: MaintenanceOptions = {}): Maintainer {
    return new Maintainer(this.#ctx, resolveMaintenanceOptions(options));
  }

  /** The worker registry: one row per live worker, with its load, counts and heartbeat age. */
  workers(): Promise<WorkerInfo[]> {
    return this.#guard(() => listWorkers(this.#ctx.db, this.#ctx.tables));
  }

  stats(): Promise<QueueStats[]> {
    return this.#guard(() => queueStats(this.#ctx.db, this.#ctx.tables));
  }

  serverInfo(): Promise<ServerInfo> {
    return this.#guard(() => this.#ctx.serverInfo());
  }

  /** Closes the pool sluice opened (an app's own knex is left open). Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#ownsKnex ? this.knex.destroy() : Promise.resolve();
    return this.#closing;
  }

  /** Re-throws connection failures as ConnectionError and a missing schema as SchemaVersionError, each with the fix and no password. */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const { code, errno, sqlMessage } = error as { code?: string; errno?: number; sqlMessage?: string };
      if (errno === ER.NO_SUCH_TABLE) {
        throw new SchemaVersionError(`${sqlMessage}: run \`sluice migrate\` (or sluice.migrate()) against this database first`);
      }
      if (this.#url && (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ER_ACCESS_DENIED_ERROR' || code === 'ER_BAD_DB_ERROR')) {
        throw describeConnectionFailure(this.#url, error);
      }
      throw error;
    }
  }
}

export function createSluice(options: SluiceOptions = {}): Sluice {
  return new Sluice(options);
}
