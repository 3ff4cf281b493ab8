/**
 * Glossary
 * - job: one unit of work, a row in `<prefix>jobs` while it waits, runs or awaits a retry.
 * - claim: a worker's hold on a job: `lock_id` = `<host>-<pid>~<token>`, with a token unique to
 *   the claim statement, and `locked_at` from the DB clock. Every later write to the job (complete,
 *   retry, dead-letter, extend, release) matches that lock_id exactly: this is the fence.
 * - retry_times: failed attempts so far (a handler failure, or a claim the maintenance process took back).
 *   A job runs while retry_times <= max_retries; past that it moves to `<prefix>dead_jobs`.
 * - batch: the jobs of one enqueueBatch call, written all-or-nothing in one transaction.
 */
import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { type PayloadSource, storedPayloadJson } from './storedPayload.ts';

/** What application code submits. */
export interface JobSpec {
  /** Handler name: a file in jobs/ or a defineJob name. 1–128 chars of [A-Za-z0-9_.:-]. */
  readonly name: string;
  /**
   * Plain data, stored as JSON text: objects, arrays, strings, finite numbers, booleans, null. A
   * value JSON would store changed (NaN, a function, a Map, a class instance, a hole, …) is
   * refused at its path; a Date is stored as its ISO text, a toJSON as what it returns, a key whose
   * value is undefined is left out (docs/jobs.md, Payloads). @defaultValue `{}`
   */
  readonly payload?: unknown;
  /** The queue the job waits in: workers claim from the queues they name. 1–64 of `A-Z a-z 0-9 _ . : -`. @defaultValue the definition's `queue`, else `'default'` */
  readonly queue?: string;
  /** Lower runs first; an integer in [-32768, 32767]. @defaultValue 0 */
  readonly priority?: number;
  /** Not before this time. Mutually exclusive with delayMs. */
  readonly runAt?: Date;
  /** Not before NOW(3) + delayMs on the database clock. */
  readonly delayMs?: number;
  /** Retries after the first failed attempt. @defaultValue the definition's, else 3 */
  readonly maxRetries?: number;
  /** At most one job per (queue, idempotencyKey) while live and for the retention after it finishes. */
  readonly idempotencyKey?: string;
  /** This job's retry backoff; overrides its definition's. */
  readonly backoff?: StoredBackoff;
  /**
   * A name for this job inside its batch, for other jobs of the batch to list in `parents`.
   * 1–191 characters, unique within the batch. enqueueBatch only.
   */
  readonly ref?: string;
  /**
   * The jobs this one waits for (a workflow): each a `ref` of this batch, the id of a live job, or
   * `{ job, continueOnFailure }`. The job is held back until every parent finished; if a parent
   * dies or is cancelled, this job is cancelled too, unless continueOnFailure holds for that parent.
   * enqueueBatch only.
   */
  readonly parents?: readonly ParentRef[];
  /** Run even when a parent dies or is cancelled (for every parent; a parent's own setting wins). @defaultValue false */
  readonly continueOnFailure?: boolean;
  /**
   * The job's group (an account, a tenant, an API): 1–191 characters. Jobs of one group of a queue
   * share its limits (`groupLimits`, the queue's `groupConcurrency`) and a fair queue takes turns
   * between groups. No group: the job pays nothing for any of this.
   */
  readonly group?: string;
  /** Limits for the job's group, written onto the group (last write wins). Needs `group`. */
  readonly groupLimits?: GroupLimitsSpec;
  /**
   * One waiting job per (queue, key): a later job with the key replaces the waiting one's payload
   * and name and pushes its start to NOW + delayMs, at most maxWaitMs after the first enqueue.
   * enqueue (one job) only.
   */
  readonly debounce?: { readonly key: string; readonly delayMs: number; readonly maxWaitMs?: number };
  /** At most one job per (queue, key) per windowMs: later ones are dropped and reported as throttled. */
  readonly throttle?: { readonly key: string; readonly windowMs: number };
}

/** Limits of one group of a queue, given with a job or a definition. */
export interface GroupLimitsSpec {
  /** At most this many jobs of the group live and unheld (waiting, running, awaiting a retry) across the fleet. */
  readonly concurrency?: number;
  /** At most `limit` of the group's jobs start per `intervalMs` (docs/flow-control.md). */
  readonly rate?: { readonly limit: number; readonly intervalMs: number };
}

/** A parent named by a job: a batch-local `ref`, the id of a live job, or either with its own continueOnFailure. */
export type ParentRef = string | number | { readonly job: string | number; readonly continueOnFailure?: boolean };

/** A claimed job, as a handler sees it. */
export interface Job<P = unknown> {
  readonly id: number;
  readonly queue: string;
  readonly name: string;
  readonly payload: P;
  readonly priority: number;
  readonly runAt: Date;
  readonly retryTimes: number;
  readonly maxRetries: number | null;
  readonly batchId: number | null;
  readonly idempotencyKey: string | null;
  /** The job's own backoff, if it was enqueued with one. */
  readonly backoff: StoredBackoff | null;
  readonly createdAt: Date;
  /** The claim this worker holds on the job (the fence). */
  readonly lockId: string;
  /**
   * Bits of jobs.flags (src/model/jobFlags.ts): whether the job has parents or dependents, holds a
   * group slot, or counts its start against its group's rate.
   */
  readonly flags: number;
}

/** The row as stored (snake_case, as in the DB). */
export interface JobRow {
  id: number;
  queue: string;
  name: string;
  /** JSON text; a claim reads it as bytes (claimedRow.ts). */
  payload: string | Buffer;
  priority: number;
  run_at: Date;
  lock_id: string;
  retry_times: number;
  max_retries: number | null;
  batch_id: number | null;
  idempotency_key: string | null;
  backoff: string | null;
  created_at: Date;
  flags: number;
}

/** The columns of a JobRow, in a SELECT list: every read of whole jobs names exactly these. */
export const JOB_ROW_COLUMNS =
  'id, queue, name, payload, priority, run_at, lock_id, retry_times, max_retries, batch_id, idempotency_key, backoff, created_at, flags';

/**
 * Converts at the DB boundary: the row as a Job carrying `payload` — a claimed job's is parsed when
 * it starts (RunningJob.openPayload, with parseStoredPayload).
 */
export function jobWithPayload<P>(row: JobRow, payload: P): Job<P> {
  return {
    id: Number(row.id),
    queue: row.queue,
    name: row.name,
    payload,
    priority: row.priority,
    runAt: row.run_at,
    retryTimes: row.retry_times,
    maxRetries: row.max_retries,
    batchId: row.batch_id === null ? null : Number(row.batch_id),
    idempotencyKey: row.idempotency_key,
    backoff: row.backoff === null ? null : (JSON.parse(row.backoff) as StoredBackoff),
    createdAt: row.created_at,
    lockId: row.lock_id,
    flags: Number(row.flags ?? 0),
  };
}

/**
 * A stored payload as the driver returned it, text or bytes (a claim reads bytes: claimedRow.ts),
 * read from its row or apart, unpacked (storedPayload.ts) and parsed. Throws PayloadRefusedError
 * when it is not what sluice writes (storedPayloadJson), SyntaxError when it is not JSON.
 */
export function parseStoredPayload(stored: string | Buffer, from: PayloadSource): unknown {
  return JSON.parse(storedPayloadJson(stored, from));
}

/** What a handler receives beside its payload. */
export interface JobContext<P = unknown> {
  /** The claimed job: its id, queue, name, payload, priority, runAt, retryTimes, batchId, lockId, … */
  readonly job: Job<P>;
  /**
   * Aborted when the attempt times out, the claim is lost, the worker is forced to stop, or the
   * job is cancelled (the reason is then a JobCancelledError).
   */
  readonly signal: AbortSignal;
  /** The install's pino logger, bound to the job (`jobId` and `job`, its name, on every line). */
  readonly logger: Logger;
  /** The sluice knex instance, for handlers that write to the same database. */
  readonly knex: Knex;
  /**
   * exactly-once jobs only: the transaction in which the job's fenced removal commits. Write
   * through it, and the writes commit with the job's completion or not at all.
   */
  readonly trx?: Knex.Transaction;
  /**
   * Reports how far along the job is: a number (a fraction from 0 to 1 shows as a bar on the
   * dashboard) or a small JSON value (at most 4 KiB as JSON; more, or a value JSON cannot hold, is
   * dropped with a `progress:dropped` warning and the attempt goes on). Calls cost no round trip:
   * the latest value is written with the worker's next heartbeat, and `sluice.jobs.get(id)` shows it.
   */
  progress(value: unknown): void;
  /**
   * Keeps a line with the job: `sluice.jobs.get(id)` shows it (`logs`), as do `sluice jobs get` and
   * the dashboard's job page, while the job is live and then with its history or dead row. Calls
   * cost no round trip: lines are written with the worker's next heartbeat or with the attempt's
   * end. An attempt keeps at most `maxLogLines` lines and `maxLogBytes` bytes (createSluice
   * options); later lines are counted as dropped. `fields` must be JSON-serialisable (else a
   * RangeError).
   */
  log(message: string, fields?: Readonly<Record<string, unknown>>): void;
  /**
   * A workflow job's parents, each with how it ended and what its handler returned (from
   * job_history: `result` is undefined with history off, or when the parent returned nothing). A
   * parent that is dead or cancelled shows here only when this job runs without it
   * (continueOnFailure). One indexed read per call; an empty list outside a workflow.
   */
  parents(): Promise<readonly ParentResult[]>;
  /**
   * Ends the attempt and runs the job again `delayMs` from now (DB clock), without counting a failed
   * attempt: "not yet". Throws a JobSnoozedError, which the worker catches (do not catch it in the
   * handler). `delayMs`: 0 to one day. To also pause the queue, throw a RateLimitedError instead.
   */
  snooze(delayMs: number): never;
}

/** One parent of a workflow job, as `ctx.parents()` returns it. */
export interface ParentResult {
  readonly id: number;
  readonly outcome: 'completed' | 'dead' | 'cancelled' | 'lost';
  readonly result: unknown;
}

/** Delay before retry number `retryTimes` (1 for the first retry). */
export type BackoffFunction = (retryTimes: number, error: Error) => number;

/** A backoff that can be stored with a job. */
export type StoredBackoff =
  | { readonly type: 'fixed'; readonly delayMs: number }
  | { readonly type: 'exponential'; readonly delayMs: number; readonly maxDelayMs?: number; readonly jitter?: number };

export type Backoff = StoredBackoff | BackoffFunction;
