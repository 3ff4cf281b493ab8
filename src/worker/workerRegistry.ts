import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { NAME_PATTERN } from '../model/validateJob.ts';
import { decodeWorkerMetrics, type WorkerMetrics } from './metricsSnapshot.ts';

/** Most job names one worker keeps (and publishes) as given back for want of a handler. */
export const UNKNOWN_NAMES_MAX = 100;

/**
 * Params: id, host, name, pid, queues, heartbeat interval, lock timeout, concurrency, concurrency
 * limit, job names (JSON array). Registers (or re-registers) a worker. Counts as a beat.
 */
const sqlRegister = (t: Tables) => `
INSERT INTO ${t.workers} (id, host, name, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, lock_timeout_ms, concurrency, concurrency_limit, job_names)
VALUES (?, ?, ?, ?, ?, NOW(3), NOW(3), ?, ?, ?, ?, ?)
ON DUPLICATE KEY UPDATE heartbeat_at = NOW(3), beats = beats + 1`;

/**
 * Params: in_flight, processed, failed, cpu, free_mem, concurrency_limit, claim latency, counters,
 * metrics (NULL: leave the row's as they are), unknown jobs (JSON array, or NULL: none), id. A worker's heartbeat: heartbeat_at (for people: on this server's clock) and the beat counter
 * change, which is all the maintenance process looks at. affectedRows 0 means the maintenance
 * process already declared it dead and removed it. Autocommit: re-run by the Executor after a
 * transient conflict.
 */
const sqlHeartbeat = (t: Tables) => `
UPDATE ${t.workers}
SET heartbeat_at = NOW(3),
    beats = beats + 1,
    in_flight = ?,
    processed = ?,
    failed = ?,
    cpu = ?,
    free_mem = ?,
    concurrency_limit = ?,
    claim_latency_ms = ?,
    counters = ?,
    metrics = COALESCE(?, metrics),
    unknown_jobs = ?
WHERE id = ?`;

/** Params: id. */
const sqlDeregister = (t: Tables) => `
DELETE FROM ${t.workers}
WHERE id = ?`;

/**
 * Params: none. The fleet, with each heartbeat's age on the DB clock, and with each worker's
 * metrics when asked (the widest column: a few KB a worker).
 */
const sqlList = (t: Tables, metrics: boolean) => `
SELECT id, host, name, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, lock_timeout_ms, concurrency, concurrency_limit, in_flight, processed, failed, cpu, free_mem, claim_latency_ms, counters, job_names, unknown_jobs,${metrics ? ' metrics,' : ''}
       TIMESTAMPDIFF(MICROSECOND, heartbeat_at, NOW(3)) DIV 1000 AS heartbeat_age_ms
FROM ${t.workers}
ORDER BY host, pid, id`;

export interface WorkerRegistration {
  readonly id: string;
  readonly host: string;
  /** Stable across restarts (SLUICE_WORKER_NAME, or PM2's instance): the label metrics use. */
  readonly name: string;
  readonly pid: number;
  readonly queues: readonly string[];
  readonly heartbeatIntervalMs: number;
  /** The claim lifetime this worker heartbeats against; the maintenance process honours it for this worker's claims. */
  readonly lockTimeoutMs: number;
  readonly concurrency: number;
  /** The job names this worker has handlers for. */
  readonly jobNames: readonly string[];
}

/** A job name a worker claimed, had no handler for, and gave back (ClaimLoop), with how many of its jobs. */
export interface UnknownJobName {
  readonly name: string;
  /** The queue it was last given back from. */
  readonly queue: string;
  givenBack: number;
}

export interface WorkerHeartbeat {
  readonly inFlight: number;
  readonly processed: number;
  readonly failed: number;
  readonly cpu: number | null;
  readonly freeMem: number | null;
  readonly concurrencyLimit: number;
  readonly claimLatencyMs: number | null;
  /** Per queue: jobs this worker completed, failed (attempts), dead-lettered and saw cancelled since it started. */
  readonly counters: Record<string, QueueCounters>;
  /**
   * The worker's metrics as last sent (every metricsIntervalMs): JSON text (metricsSnapshot.ts),
   * or null to leave the row's as they are.
   */
  readonly metrics: string | null;
  /** The job names this worker gave back for want of a handler (at most UNKNOWN_NAMES_MAX). */
  readonly unknownJobs: readonly UnknownJobName[];
}

export interface QueueCounters {
  completed: number;
  failed: number;
  dead: number;
  /** Jobs cancelled while this worker ran them (absent in rows of earlier versions). */
  cancelled: number;
  /** Attempts that snoozed (absent in rows of earlier versions). */
  snoozed?: number;
}

/**
 * A live worker as its row says. `jobNames`: the job names it has handlers for (empty for a worker
 * of an earlier version: it did not say); `unknownJobs`: the names it claimed, had no handler
 * for and gave back.
 */
export interface WorkerInfo extends Omit<WorkerRegistration, 'lockTimeoutMs'>, Omit<WorkerHeartbeat, 'metrics'> {
  /** null for a worker of a version that did not register it. */
  readonly lockTimeoutMs: number | null;
  /**
   * The worker's counters and histograms as it last sent them (at most metricsIntervalMs ago):
   * read only by `workers.list({ metrics: true })`; null otherwise, before its first send, or for
   * a worker of another version.
   */
  readonly metrics: WorkerMetrics | null;
  readonly startedAt: Date;
  readonly heartbeatAt: Date;
  readonly heartbeatAgeMs: number;
}

export async function registerWorker(db: Executor, tables: Tables, w: WorkerRegistration): Promise<void> {
  await db.write(sqlRegister(tables), [
    w.id,
    w.host,
    w.name,
    w.pid,
    w.queues.join(','),
    w.heartbeatIntervalMs,
    w.lockTimeoutMs,
    w.concurrency,
    w.concurrency,
    JSON.stringify(w.jobNames),
  ]);
}

/** Returns false if the row is gone (the maintenance process declared this worker dead). */
export async function heartbeatWorker(db: Executor, tables: Tables, id: string, h: WorkerHeartbeat): Promise<boolean> {
  const { affectedRows } = await db.write(sqlHeartbeat(tables), [
    h.inFlight,
    h.processed,
    h.failed,
    h.cpu,
    h.freeMem,
    h.concurrencyLimit,
    h.claimLatencyMs,
    JSON.stringify(h.counters),
    h.metrics,
    h.unknownJobs.length > 0 ? JSON.stringify(h.unknownJobs) : null,
    id,
  ]);
  return affectedRows === 1;
}

export async function deregisterWorker(db: Executor, tables: Tables, id: string): Promise<void> {
  await db.write(sqlDeregister(tables), [id]);
}

/** The fleet (one statement); with each worker's metrics when `metrics`. */
export async function listWorkers(db: Executor, tables: Tables, metrics = false): Promise<WorkerInfo[]> {
  const rows = await db.select<Record<string, unknown>>(sqlList(tables, metrics));
  return rows.map((r) => ({
    id: String(r.id),
    host: String(r.host),
    name: r.name === null ? `pid-${r.pid}` : String(r.name),
    pid: Number(r.pid),
    queues: String(r.queues).split(',').filter(Boolean),
    heartbeatIntervalMs: Number(r.heartbeat_interval_ms),
    lockTimeoutMs: r.lock_timeout_ms === null ? null : Number(r.lock_timeout_ms),
    concurrency: Number(r.concurrency),
    concurrencyLimit: Number(r.concurrency_limit),
    inFlight: Number(r.in_flight),
    processed: Number(r.processed),
    failed: Number(r.failed),
    cpu: r.cpu === null ? null : Number(r.cpu),
    freeMem: r.free_mem === null ? null : Number(r.free_mem),
    claimLatencyMs: r.claim_latency_ms === null ? null : Number(r.claim_latency_ms),
    counters: r.counters ? (JSON.parse(String(r.counters)) as Record<string, QueueCounters>) : {},
    metrics: metrics ? decodeWorkerMetrics(r.metrics) : null,
    jobNames: decodeJobNames(r.job_names),
    unknownJobs: decodeUnknownJobs(r.unknown_jobs),
    startedAt: r.started_at as Date,
    heartbeatAt: r.heartbeat_at as Date,
    heartbeatAgeMs: Number(r.heartbeat_age_ms),
  }));
}

/** Longest job_names text decoded (a worker of 10,000 job types of 128 characters fits twice). */
const JOB_NAMES_MAX_CHARS = 3_000_000;

/**
 * A stored job_names value (untrusted): the strings of a JSON array that are names (NAME_PATTERN:
 * printable as they are); [] for NULL (a worker of an earlier version), text over
 * JOB_NAMES_MAX_CHARS or anything else.
 */
function decodeJobNames(value: unknown): string[] {
  const parsed = parsedWithin(value, JOB_NAMES_MAX_CHARS);
  if (!Array.isArray(parsed)) return [];
  return parsed.filter((n): n is string => typeof n === 'string' && NAME_PATTERN.test(n));
}

/**
 * A stored unknown_jobs value (untrusted): at most UNKNOWN_NAMES_MAX well-formed entries (name and
 * queue matching NAME_PATTERN); [] for NULL (none given back) or anything else.
 */
function decodeUnknownJobs(value: unknown): UnknownJobName[] {
  const parsed = parsedWithin(value, UNKNOWN_NAMES_MAX * 512);
  if (!Array.isArray(parsed)) return [];
  const entries: UnknownJobName[] = [];
  for (const e of parsed.slice(0, UNKNOWN_NAMES_MAX) as unknown[]) {
    if (typeof e !== 'object' || e === null) continue;
    const { name, queue, givenBack } = e as Record<string, unknown>;
    if (typeof name !== 'string' || typeof queue !== 'string' || typeof givenBack !== 'number') continue;
    if (!NAME_PATTERN.test(name) || !NAME_PATTERN.test(queue)) continue;
    entries.push({
      name,
      queue,
      givenBack: Number.isFinite(givenBack) ? Math.max(0, Math.floor(givenBack)) : 0,
    });
  }
  return entries;
}

/** JSON text of at most `maxChars` parsed, or undefined (NULL, too long, not JSON). */
function parsedWithin(value: unknown, maxChars: number): unknown {
  if (typeof value !== 'string' || value.length > maxChars) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}
