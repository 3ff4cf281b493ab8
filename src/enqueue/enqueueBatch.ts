import type { Knex } from 'knex';
import type { SluiceContext } from '../context.ts';
import { fromKnex, type Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import type { StoredCompletionJob } from '../maintenance/finishBatches.ts';
import type { JobSpec } from '../types.ts';
import { BatchWriter } from './BatchWriter.ts';
import { chunkLimitsFor } from './planChunks.ts';
import { keyOf } from './reserveIdempotencyKeys.ts';
import { validateJob, type NormalizedJob } from './validateJob.ts';

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
 * Writes a batch all-or-nothing. Every job is validated before anything is written (one bad job
 * throws JobValidationError naming its index; zero rows exist afterwards); then one transaction
 * (or a savepoint in the caller's) holds the batch row and every chunk, written by a BatchWriter
 * slice by slice, so memory beyond the caller's array is one slice.
 */
export async function enqueueBatch(ctx: SluiceContext, jobs: readonly JobSpec[], options: EnqueueBatchOptions = {}): Promise<EnqueueBatchResult> {
  const started = performance.now();
  if (!Array.isArray(jobs)) throw new JobValidationError(-1, 'jobs', 'must be an array of jobs');
  if (jobs.length > ctx.options.maxBatchSize) {
    throw new JobValidationError(-1, 'jobs', `holds ${jobs.length} jobs, over maxBatchSize ${ctx.options.maxBatchSize}`);
  }
  validateAll(jobs, ctx.options.maxPayloadBytes);
  const onComplete = options.onComplete === undefined ? null : storedCompletionJob(options.onComplete, ctx.options.maxPayloadBytes);
  if (jobs.length === 0) return { batchId: null, count: 0, skipped: 0 };

  const limits = chunkLimitsFor((await ctx.serverInfo()).maxAllowedPacket, ctx.options.maxRowsPerInsert);
  const db: Executor = options.trx ? fromKnex(options.trx) : ctx.db;
  const result = await withTransaction(db, async (tx) => {
    const writer = await BatchWriter.open(ctx, tx, limits, onComplete);
    for (let i = 0; i < jobs.length; i += limits.maxRows) await writer.write(jobs.slice(i, i + limits.maxRows));
    return writer.close();
  });
  ctx.events.emit('batch:enqueued', { batchId: result.batchId, count: result.count, chunks: result.chunks, durationMs: Math.round(performance.now() - started) });
  return { batchId: result.batchId, count: result.count, skipped: result.skipped };
}

/** The first pass: every job valid, no idempotency key twice in the batch. Keeps only the keys. */
function validateAll(jobs: readonly JobSpec[], maxPayloadBytes: number): void {
  const seenKeys = new Set<string>();
  for (let i = 0; i < jobs.length; i++) {
    const job = validateJob(jobs[i] as JobSpec, i, { maxPayloadBytes });
    if (job.idempotencyKey === null) continue;
    const key = keyOf({ queue: job.queue, idempotencyKey: job.idempotencyKey });
    if (seenKeys.has(key)) throw new JobValidationError(i, 'idempotencyKey', `repeats a key used earlier in this batch (${job.idempotencyKey})`);
    seenKeys.add(key);
  }
}

/** Validates the completion job now (nothing is written if it is bad) and renders it for the batches row. */
function storedCompletionJob(spec: JobSpec, maxPayloadBytes: number): string {
  let job: NormalizedJob;
  try {
    job = validateJob(spec, -1, { maxPayloadBytes });
  } catch (error) {
    if (error instanceof JobValidationError) throw new JobValidationError(-1, `onComplete.${error.field}`, error.reason);
    throw error;
  }
  if (spec.payload !== undefined && (typeof spec.payload !== 'object' || spec.payload === null || Array.isArray(spec.payload))) {
    throw new JobValidationError(-1, 'onComplete.payload', 'must be an object (the batch summary is added to it)');
  }
  if (job.runAt !== null || job.delayMs > 0 || job.idempotencyKey !== null || job.backoff !== null) {
    throw new JobValidationError(-1, 'onComplete', "takes no runAt, delayMs, idempotencyKey or backoff (it runs when the batch finishes, with its definition's backoff)");
  }
  const stored: StoredCompletionJob = { queue: job.queue, name: job.name, payload: job.payload, priority: job.priority, maxRetries: job.maxRetries };
  return JSON.stringify(stored);
}
