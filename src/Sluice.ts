import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { SluiceContext } from './context.ts';
import { connect, describeConnectionFailure, redactUrl, resolveUrl } from './db/connect.ts';
import { fromKnex } from './db/executor.ts';
import { migrate } from './db/migrate.ts';
import { readServerInfo, type ServerInfo } from './db/serverInfo.ts';
import { tablesFor } from './db/tables.ts';
import { enqueueBatch, type EnqueueBatchResult, type EnqueueOptions } from './enqueue/enqueueBatch.ts';
import { enqueueJob, type EnqueueResult } from './enqueue/enqueueJob.ts';
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
    this.knex = options.knex ?? connect({ url: this.#url as string, poolMax: resolved.poolMax });
    subscribeLogger(this.events, this.logger);
    this.#ctx = {
      knex: this.knex,
      db: fromKnex(this.knex),
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

  enqueueBatch(jobs: readonly JobSpec[], options?: EnqueueOptions): Promise<EnqueueBatchResult> {
    return this.#guard(() => enqueueBatch(this.#ctx, jobs, options));
  }

  /** A worker (not started): `await worker.start()`, later `await worker.stop()`. */
  worker(options: WorkerOptions = {}): Worker {
    return new Worker(this.#ctx, resolveWorkerOptions(options));
  }

  /** The sweeper (not started): `start()` on its cron schedule, or `runOnce()`. */
  maintenance(options: MaintenanceOptions = {}): Maintainer {
    return new Maintainer(this.#ctx, resolveMaintenanceOptions(options));
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

  /** Re-throws connection failures as ConnectionError with the fix and no password. */
  async #guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const code = (error as { code?: string }).code;
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
