import { escape } from 'mysql2';
import type { SluiceContext } from '../context.ts';
import { fromKnex, type Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import type { JobSpec } from '../types.ts';
import type { Knex } from 'knex';
import type { StoredCompletionJob } from '../maintenance/finishBatches.ts';
import { chunkLimitsFor, planChunks } from './planChunks.ts';
import { keyOf, linkIdempotencyKeys, reserveIdempotencyKeys, type KeyedJob } from './reserveIdempotencyKeys.ts';
import { validateJob, type NormalizedJob } from './validateJob.ts';

/** Params: ?1 size, ?2 completion job (JSON) or NULL. Returns insertId = the new batch's id. */
const sqlInsertBatch = (t: SluiceContext['tables']) => `
INSERT INTO ${t.batches} (size, on_complete, created_at)
VALUES (?, ?, NOW(3))`;

/**
 * Multi-row INSERT prefix; the VALUES tuples are rendered with mysql2's escaping (text
 * protocol, so no 65,535-placeholder limit; max_allowed_packet bounds each statement).
 * Returns affectedRows = rows inserted.
 */
const sqlInsertJobsPrefix = (t: SluiceContext['tables']) =>
  `INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, max_retries, backoff, batch_id, idempotency_key, created_at) VALUES `;

export interface EnqueueOptions {
  /** The caller's knex transaction: the jobs commit or roll back with the caller's own rows. */
  readonly trx?: Knex.Transaction;
}

export interface EnqueueBatchOptions extends EnqueueOptions {
  /**
   * A job enqueued once, when every job of the batch has finished (succeeded or dead-lettered).
   * Its payload (an object) receives `batch: { id, size, succeeded, dead }`.
   */
  readonly onComplete?: JobSpec;
}

export interface EnqueueBatchResult {
  /** null when nothing was written (an empty batch, or every job a duplicate). */
  readonly batchId: number | null;
  /** Jobs written. */
  readonly count: number;
  /** Jobs left out because their idempotency key is held by another job (live or recently finished). */
  readonly skipped: number;
}

/**
 * Writes a batch all-or-nothing. Every job is validated before anything is written; then one
 * transaction (or a savepoint in the caller's) holds the batch row and every chunk. Memory
 * beyond the caller's array is one chunk: tuples are rendered lazily, chunk by chunk.
 */
export async function enqueueBatch(
  ctx: SluiceContext,
  jobs: readonly JobSpec[],
  options: EnqueueBatchOptions = {},
): Promise<EnqueueBatchResult> {
  const started = performance.now();
  if (!Array.isArray(jobs)) throw new JobValidationError(-1, 'jobs', 'must be an array of jobs');
  if (jobs.length > ctx.options.maxBatchSize) {
    throw new JobValidationError(-1, 'jobs', `holds ${jobs.length} jobs, over maxBatchSize ${ctx.options.maxBatchSize}`);
  }
  const limits = { maxPayloadBytes: ctx.options.maxPayloadBytes };
  const keyed: KeyedJob[] = [];
  const seenKeys = new Set<string>();
  for (let i = 0; i < jobs.length; i++) {
    const job = validateJob(jobs[i] as JobSpec, i, limits);
    if (job.idempotencyKey !== null) {
      const entry = { queue: job.queue, idempotencyKey: job.idempotencyKey };
      if (seenKeys.has(keyOf(entry))) throw new JobValidationError(i, 'idempotencyKey', `repeats a key used earlier in this batch (${job.idempotencyKey})`);
      seenKeys.add(keyOf(entry));
      keyed.push(entry);
    }
  }
  seenKeys.clear();
  const onComplete = options.onComplete === undefined ? null : storedCompletionJob(options.onComplete, limits);
  if (jobs.length === 0) return { batchId: null, count: 0, skipped: 0 };

  const { maxAllowedPacket } = await ctx.serverInfo();
  const chunkLimits = chunkLimitsFor(maxAllowedPacket, ctx.options.maxRowsPerInsert);
  const db: Executor = options.trx ? fromKnex(options.trx) : ctx.db;

  let chunks = 0;
  const result = await withTransaction(db, async (tx) => {
    const reservation = keyed.length > 0 ? await reserveIdempotencyKeys(tx, ctx.tables, keyed, chunkLimits) : null;
    const skipped = reservation ? keyed.length - reservation.won.size : 0;
    const expected = jobs.length - skipped;
    if (expected === 0) return { batchId: null, count: 0, skipped };
    const { insertId: batchId } = await tx.write(sqlInsertBatch(ctx.tables), [expected, onComplete]);
    const tuples = renderTuples(jobs, limits, batchId, reservation?.won ?? null);
    let inserted = 0;
    chunks = 0;
    for (const statement of planChunks(sqlInsertJobsPrefix(ctx.tables), tuples, chunkLimits)) {
      inserted += (await tx.write(statement)).affectedRows;
      chunks++;
    }
    if (inserted !== expected) {
      throw new Error(`batch ${batchId}: inserted ${inserted} of ${expected} rows; rolled back`);
    }
    if (reservation) await linkIdempotencyKeys(tx, ctx.tables, reservation.owner);
    return { batchId, count: inserted, skipped };
  });
  ctx.events.emit('batch:enqueued', { batchId: result.batchId, count: result.count, chunks, durationMs: Math.round(performance.now() - started) });
  return result;
}

/** Validates the completion job now (nothing is written if it is bad) and renders it for the batches row. */
function storedCompletionJob(spec: JobSpec, limits: { maxPayloadBytes: number }): string {
  let job: NormalizedJob;
  try {
    job = validateJob(spec, -1, limits);
  } catch (error) {
    if (error instanceof JobValidationError) throw new JobValidationError(-1, `onComplete.${error.field}`, error.reason);
    throw error;
  }
  if (spec.payload !== undefined && (typeof spec.payload !== 'object' || spec.payload === null || Array.isArray(spec.payload))) {
    throw new JobValidationError(-1, 'onComplete.payload', 'must be an object (the batch summary is added to it)');
  }
  if (job.runAt !== null || job.delayMs > 0 || job.idempotencyKey !== null || job.backoff !== null) {
    throw new JobValidationError(-1, 'onComplete', 'takes no runAt, delayMs, idempotencyKey or backoff (it runs when the batch finishes, with its definition\'s backoff)');
  }
  const stored: StoredCompletionJob = { queue: job.queue, name: job.name, payload: job.payload, priority: job.priority, maxRetries: job.maxRetries };
  return JSON.stringify(stored);
}

/**
 * Lazily renders each job as a VALUES tuple (validation already passed, so it cannot throw here),
 * leaving out jobs whose idempotency key another job holds.
 */
function* renderTuples(
  jobs: readonly JobSpec[],
  limits: { maxPayloadBytes: number },
  batchId: number | null,
  wonKeys: ReadonlySet<string> | null,
): Generator<string> {
  for (let i = 0; i < jobs.length; i++) {
    const job = validateJob(jobs[i] as JobSpec, i, limits);
    if (job.idempotencyKey !== null && wonKeys && !wonKeys.has(keyOf({ queue: job.queue, idempotencyKey: job.idempotencyKey }))) continue;
    yield renderTuple(job, batchId);
  }
}

export function renderTuple(job: NormalizedJob, batchId: number | null): string {
  const runAt =
    job.runAt !== null
      ? `'${job.runAt.toISOString().slice(0, 23).replace('T', ' ')}'`
      : job.delayMs > 0
        ? `NOW(3) + INTERVAL ${job.delayMs * 1000} MICROSECOND`
        : 'NOW(3)';
  return `(${escape(job.queue)},${escape(job.name)},${escape(job.payload)},${job.priority},${runAt},${
    job.maxRetries ?? 'NULL'
  },${job.backoff === null ? 'NULL' : escape(job.backoff)},${batchId ?? 'NULL'},${job.idempotencyKey === null ? 'NULL' : escape(job.idempotencyKey)},NOW(3))`;
}
