import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { OptionsError } from './errors.ts';
import { readHostLoad, type LoadReading } from './stats/processStats.ts';
import type { Backoff, JobDefinition } from './types.ts';
import type { ConcurrencyPolicy } from './worker/concurrencyPolicy.ts';
import { backoffProblem } from './worker/backoff.ts';

/** createSluice's options. Every field is optional. */
export interface SluiceOptions {
  /** mysql://user:password@host:port/database. @defaultValue `MYSQL_URL`, then `mysql://root@127.0.0.1:3306/test` */
  url?: string;
  /** Share the application's own knex (mysql2 client). sluice then never closes it. */
  knex?: Knex;
  /** Prefix of every sluice table. @defaultValue `'sluice_'` */
  tablePrefix?: string;
  /** A pino logger; sluice logs through one subscriber of its events. @defaultValue a new pino logger */
  logger?: Logger;
  /** Pool size when sluice opens its own pool. @defaultValue 10 */
  poolMax?: number;
  /** Largest payload, as JSON, in bytes. @defaultValue 1 MiB */
  maxPayloadBytes?: number;
  /** Largest enqueueBatch. @defaultValue 1,000,000 */
  maxBatchSize?: number;
  /** Most rows in one multi-row INSERT (the packet limit also applies). @defaultValue 5,000 */
  maxRowsPerInsert?: number;
  /** How long a finished job's idempotency key keeps refusing duplicates. @defaultValue 24 h */
  idempotencyRetentionMs?: number;
  /** How long completed jobs stay in job_history; 0 keeps no history. @defaultValue 24 h */
  historyRetentionMs?: number;
  /** How long dead jobs are kept; 0 keeps them until purged. @defaultValue 7 days */
  deadRetentionMs?: number;
}

export interface ResolvedSluiceOptions {
  readonly tablePrefix: string;
  readonly poolMax: number;
  readonly maxPayloadBytes: number;
  readonly maxBatchSize: number;
  readonly maxRowsPerInsert: number;
  readonly idempotencyRetentionMs: number;
  readonly historyRetentionMs: number;
  readonly deadRetentionMs: number;
}

export const SLUICE_DEFAULTS = {
  tablePrefix: 'sluice_',
  poolMax: 10,
  maxPayloadBytes: 1024 * 1024,
  maxBatchSize: 1_000_000,
  maxRowsPerInsert: 5_000,
  idempotencyRetentionMs: 24 * 3600 * 1000,
  historyRetentionMs: 24 * 3600 * 1000,
  deadRetentionMs: 7 * 24 * 3600 * 1000,
} satisfies ResolvedSluiceOptions;

export type ClaimStrategy = 'random-head' | 'skip-locked';

/** sluice.worker()'s options. */
export interface WorkerOptions {
  /** Queues to claim from, each polled in turn. @defaultValue `['default']` */
  queues?: string[];
  /** Jobs run at once by this worker. @defaultValue 10 */
  concurrency?: number;
  /** A folder of job files (one `export default defineJob(…)` each) or a list of definitions. @defaultValue `'jobs'` */
  jobs?: string | JobDefinition<any>[];
  /** @defaultValue `'random-head'` */
  claim?: ClaimStrategy;
  /** Candidates read per head scan (random-head): more candidates, fewer collisions between workers. @defaultValue 200 */
  headSize?: number;
  /** Most jobs taken by one claim statement. @defaultValue 50 */
  claimBatchSize?: number;
  /** Claims older than this are the sweeper's to take back; the worker heartbeats well within it. @defaultValue 30,000 */
  lockTimeoutMs?: number;
  /** How often in-flight claims are extended and the registry row refreshed. @defaultValue the smaller of 2,000 and lockTimeoutMs / 3 */
  heartbeatIntervalMs?: number;
  /** Delay between polls of an empty queue (jittered ±25 %). @defaultValue 1,000 */
  pollIntervalMs?: number;
  /** How long stop() waits for in-flight jobs before releasing them. @defaultValue 10,000 */
  shutdownTimeoutMs?: number;
  /** Default retries for definitions that set none. @defaultValue 3 */
  maxRetries?: number;
  /** Default backoff for definitions that set none. @defaultValue exponential from 1 s, capped at 1 h, ±20 % jitter */
  backoff?: Backoff;
  /** Longest delay between polls of empty queues: each empty poll doubles the delay up to this. @defaultValue 5,000 */
  maxPollIntervalMs?: number;
  /**
   * Load-aware concurrency: above maxCpu (host CPU busy fraction) or below minFreeMem (free
   * memory fraction) the worker halves how many jobs it runs at once; with room it grows back.
   * The CPU rule is off by default (maxCpu 1): a worker that keeps the CPU busy with useful jobs
   * is not overloaded, and throttling it only slows the queue. Set maxCpu (e.g. 0.9) where jobs
   * compete with latency-sensitive work on the host. @defaultValue maxCpu 1, minFreeMem 0.05
   */
  loadPolicy?: Partial<LoadPolicy>;
  /** Reads the host's load (tests inject one). @defaultValue os-utils */
  loadSampler?: () => Promise<LoadReading>;
}

export interface LoadPolicy extends ConcurrencyPolicy {
  readonly enabled: boolean;
}

export interface ResolvedWorkerOptions {
  readonly queues: readonly string[];
  readonly concurrency: number;
  readonly jobs: string | readonly JobDefinition<any>[];
  readonly claim: ClaimStrategy;
  readonly headSize: number;
  readonly claimBatchSize: number;
  readonly lockTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly pollIntervalMs: number;
  readonly shutdownTimeoutMs: number;
  readonly maxRetries: number;
  readonly backoff: Backoff;
  readonly maxPollIntervalMs: number;
  readonly loadPolicy: LoadPolicy;
  readonly loadSampler: () => Promise<LoadReading>;
}

export const WORKER_DEFAULTS = {
  queues: ['default'],
  concurrency: 10,
  jobs: 'jobs',
  claim: 'random-head',
  headSize: 200,
  claimBatchSize: 50,
  lockTimeoutMs: 30_000,
  heartbeatIntervalMs: 2_000,
  pollIntervalMs: 1_000,
  shutdownTimeoutMs: 10_000,
  maxRetries: 3,
  backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 3_600_000, jitter: 0.2 },
  maxPollIntervalMs: 5_000,
  loadPolicy: { enabled: true, maxCpu: 1, minFreeMem: 0.05 },
  loadSampler: readHostLoad,
} satisfies ResolvedWorkerOptions;

/** sluice.maintenance()'s options. */
export interface MaintenanceOptions {
  /** node-cron expression (seconds field allowed) for sweeps. @defaultValue every 5 s */
  schedule?: string;
  /** Claims older than this are released (retry_times + 1). Must exceed the workers' heartbeat interval. @defaultValue 30,000 */
  lockTimeoutMs?: number;
  /** How long a leader's lease lasts without renewal. @defaultValue 30,000 */
  leaseMs?: number;
  /** Rows per sweep statement. @defaultValue 500 */
  batchSize?: number;
  /** Random delay added before each tick and between batches, up to this much. @defaultValue 1,000 */
  jitterMs?: number;
  /**
   * Job definitions (a jobs folder or a list) whose `schedule` this process enqueues. Every
   * maintenance process may carry them: each tick is enqueued once fleet-wide. @defaultValue none
   */
  jobs?: string | JobDefinition<any>[];
  /** Random delay before a scheduled enqueue. @defaultValue 500 */
  scheduleJitterMs?: number;
  /** A worker that missed this many of its own heartbeat intervals is dead: its claims are released. @defaultValue 2.5 */
  missedHeartbeats?: number;
  /** Most retention-pruning batches per table in one pass. @defaultValue 20 */
  maxPruneBatches?: number;
}

export interface ResolvedMaintenanceOptions {
  readonly schedule: string;
  readonly lockTimeoutMs: number;
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly jitterMs: number;
  readonly jobs: string | readonly JobDefinition<any>[] | null;
  readonly scheduleJitterMs: number;
  readonly missedHeartbeats: number;
  readonly maxPruneBatches: number;
}

export const MAINTENANCE_DEFAULTS = {
  schedule: '*/5 * * * * *',
  lockTimeoutMs: 30_000,
  leaseMs: 30_000,
  batchSize: 500,
  jitterMs: 1_000,
  jobs: null,
  scheduleJitterMs: 500,
  missedHeartbeats: 2.5,
  maxPruneBatches: 20,
} satisfies ResolvedMaintenanceOptions;

function positiveInt(option: string, value: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new OptionsError(option, `must be an integer in [1, ${max}] (got ${String(value)})`);
  }
  return value;
}

export function resolveSluiceOptions(options: SluiceOptions): ResolvedSluiceOptions {
  const r = { ...SLUICE_DEFAULTS, ...defined(options) };
  positiveInt('poolMax', r.poolMax, 1000);
  positiveInt('maxPayloadBytes', r.maxPayloadBytes, 15 * 1024 * 1024);
  positiveInt('maxBatchSize', r.maxBatchSize);
  positiveInt('maxRowsPerInsert', r.maxRowsPerInsert, 100_000);
  positiveInt('idempotencyRetentionMs', r.idempotencyRetentionMs);
  for (const key of ['historyRetentionMs', 'deadRetentionMs'] as const) {
    if (!Number.isInteger(r[key]) || r[key] < 0) throw new OptionsError(key, `must be a whole number of milliseconds, 0 to disable (got ${String(r[key])})`);
  }
  return {
    tablePrefix: r.tablePrefix,
    poolMax: r.poolMax,
    maxPayloadBytes: r.maxPayloadBytes,
    maxBatchSize: r.maxBatchSize,
    maxRowsPerInsert: r.maxRowsPerInsert,
    idempotencyRetentionMs: r.idempotencyRetentionMs,
    historyRetentionMs: r.historyRetentionMs,
    deadRetentionMs: r.deadRetentionMs,
  };
}

export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  const lockTimeoutMs = options.lockTimeoutMs ?? WORKER_DEFAULTS.lockTimeoutMs;
  const r = {
    ...WORKER_DEFAULTS,
    heartbeatIntervalMs: Math.max(1, Math.min(WORKER_DEFAULTS.heartbeatIntervalMs, Math.floor(lockTimeoutMs / 3))),
    ...defined(options),
    loadPolicy: { ...WORKER_DEFAULTS.loadPolicy, ...defined(options.loadPolicy ?? {}) },
  };
  if (!Array.isArray(r.queues) || r.queues.length === 0 || r.queues.some((q) => typeof q !== 'string' || !/^[A-Za-z0-9_.:-]{1,64}$/.test(q))) {
    throw new OptionsError('queues', `must be a non-empty list of queue names (got ${JSON.stringify(r.queues)})`);
  }
  positiveInt('concurrency', r.concurrency, 10_000);
  positiveInt('headSize', r.headSize, 10_000);
  positiveInt('claimBatchSize', r.claimBatchSize, 1_000);
  positiveInt('lockTimeoutMs', r.lockTimeoutMs);
  positiveInt('heartbeatIntervalMs', r.heartbeatIntervalMs);
  positiveInt('pollIntervalMs', r.pollIntervalMs);
  positiveInt('shutdownTimeoutMs', r.shutdownTimeoutMs);
  positiveInt('maxPollIntervalMs', r.maxPollIntervalMs);
  if (r.maxPollIntervalMs < r.pollIntervalMs) throw new OptionsError('maxPollIntervalMs', `must be at least pollIntervalMs (${r.pollIntervalMs})`);
  const { maxCpu, minFreeMem } = r.loadPolicy;
  if (!(maxCpu > 0 && maxCpu <= 1)) throw new OptionsError('loadPolicy.maxCpu', `must be in (0, 1] (got ${maxCpu})`);
  if (!(minFreeMem >= 0 && minFreeMem < 1)) throw new OptionsError('loadPolicy.minFreeMem', `must be in [0, 1) (got ${minFreeMem})`);
  if (typeof r.loadSampler !== 'function') throw new OptionsError('loadSampler', 'must be a function returning a load reading');
  if (!Number.isInteger(r.maxRetries) || r.maxRetries < 0) throw new OptionsError('maxRetries', 'must be a non-negative integer');
  if (r.claim !== 'random-head' && r.claim !== 'skip-locked') {
    throw new OptionsError('claim', `must be 'random-head' or 'skip-locked' (got ${JSON.stringify(r.claim)})`);
  }
  const backoff = backoffProblem(r.backoff, true);
  if (backoff) throw new OptionsError('backoff', backoff);
  if (r.heartbeatIntervalMs * 2 > r.lockTimeoutMs) {
    throw new OptionsError('heartbeatIntervalMs', `must be at most half of lockTimeoutMs (${r.heartbeatIntervalMs} vs ${r.lockTimeoutMs}), or live jobs get swept`);
  }
  return { ...r, queues: [...new Set(r.queues)] };
}

export function resolveMaintenanceOptions(options: MaintenanceOptions): ResolvedMaintenanceOptions {
  const r = { ...MAINTENANCE_DEFAULTS, ...defined(options) };
  positiveInt('lockTimeoutMs', r.lockTimeoutMs);
  positiveInt('leaseMs', r.leaseMs);
  positiveInt('batchSize', r.batchSize, 10_000);
  if (!Number.isInteger(r.jitterMs) || r.jitterMs < 0) throw new OptionsError('jitterMs', 'must be a non-negative integer');
  if (!Number.isInteger(r.scheduleJitterMs) || r.scheduleJitterMs < 0) throw new OptionsError('scheduleJitterMs', 'must be a non-negative integer');
  if (!(typeof r.missedHeartbeats === 'number' && r.missedHeartbeats >= 1.5)) throw new OptionsError('missedHeartbeats', 'must be a number of at least 1.5');
  positiveInt('maxPruneBatches', r.maxPruneBatches, 10_000);
  if (typeof r.schedule !== 'string' || r.schedule.trim() === '') throw new OptionsError('schedule', 'must be a cron expression');
  return r;
}

/** Drops keys whose value is undefined, so `{ ...DEFAULTS, ...defined(options) }` keeps defaults. */
function defined<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
