import type { Knex } from 'knex';
import type { StoredCompletionJob } from '../batches/completionJob.ts';
import { type Executor, fromKnex } from '../db/executor.ts';
import { writeSetRefusal } from '../db/mysqlErrors.ts';
import { chunkLimitsFor } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import type { JobSpec } from '../model/job.ts';
import type { StoredTraceContext } from '../model/storedTraceContext.ts';
import { type NormalizedJob, validateJob } from '../model/validateJob.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { activeTracer } from '../tracing/activeTracer.ts';
import { ATTR, inSendSpan } from '../tracing/jobSpans.ts';
import { storedContextOf } from '../tracing/traceContext.ts';
import { writeBatchTraceContext } from '../tracing/writeTraceContexts.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import { lockLiveParents } from '../workflows/writeGraph.ts';
import { BatchWriter } from './BatchWriter.ts';
import { type GraphPlan, planGraph } from './planGraph.ts';

export interface EnqueueOptions {
  /** The caller's knex transaction: the jobs commit or roll back with the caller's own rows. */
  readonly trx?: Knex.Transaction;
}

export interface EnqueueBatchOptions extends EnqueueOptions {
  /**
   * A job enqueued once, when every job of the batch has finished (succeeded, dead-lettered or cancelled).
   * Its payload (an object) receives `batch: { id, size, succeeded, dead, cancelled }`.
   */
  readonly onComplete?: JobSpec;
  /** What the batch is, for people: shown by `sluice.batches` and the dashboard (at most 191 characters). */
  readonly name?: string;
}

export const ENQUEUE_KEYS = optionKeys<EnqueueOptions>({ trx: true });
export const ENQUEUE_BATCH_KEYS = optionKeys<EnqueueBatchOptions>({ trx: true, onComplete: true, name: true });

export interface EnqueueBatchResult {
  /** null when nothing was written (an empty batch, or every job a duplicate). */
  readonly batchId: number | null;
  /** Jobs written. */
  readonly count: number;
  /** Jobs left out because their idempotency key is held by another job (live or recently finished). */
  readonly skipped: number;
  /**
   * Jobs dropped because another job of their throttle key took the window (JobSpec.throttle);
   * present only when some were.
   */
  readonly throttled?: number;
}

/**
 * Writes a batch all-or-nothing: one transaction (or a savepoint in the caller's) holds the batch
 * row and every chunk, written by a BatchWriter that validates each job once, as it gathers its
 * chunk, so memory beyond the caller's array is one chunk. One bad job throws JobValidationError
 * naming its index, and the rollback leaves zero rows of the batch. With an OpenTelemetry SDK
 * registered, the batch is written in one `send` span whose context every job of it carries.
 */
export async function enqueueBatch(
  runtime: SluiceRuntime,
  jobs: readonly JobSpec[],
  options: EnqueueBatchOptions = {},
): Promise<EnqueueBatchResult> {
  const started = performance.now();
  rejectUnknownKeys('sluice.enqueueBatch', options, ENQUEUE_BATCH_KEYS);
  if (!Array.isArray(jobs)) throw new JobValidationError(-1, 'jobs', 'must be an array of jobs');
  if (jobs.length > runtime.options.maxBatchSize) {
    throw new JobValidationError(
      -1,
      'jobs',
      `holds ${jobs.length} jobs, over maxBatchSize ${runtime.options.maxBatchSize}`,
    );
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length > 191))
    throw new JobValidationError(-1, 'name', 'must be a string of at most 191 characters');
  const onComplete =
    options.onComplete === undefined ? null : storedCompletionJob(options.onComplete, runtime.options.maxPayloadBytes);
  if (jobs.length === 0) return { batchId: null, count: 0, skipped: 0 };
  const tracer = activeTracer();
  if (tracer === undefined) return writeBatch(runtime, jobs, options, onComplete, null, started);
  return inSendSpan(tracer, sharedQueue(jobs), {}, async (span) => {
    const result = await writeBatch(runtime, jobs, options, onComplete, storedContextOf(span.spanContext()), started);
    span.setAttribute(ATTR.messageCount, result.count);
    if (result.batchId !== null) span.setAttribute(ATTR.batchId, result.batchId);
    if (result.skipped > 0) span.setAttribute(ATTR.skipped, result.skipped);
    return result;
  });
}

/** The batch's transaction; with a trace context, one row more carries it for every job of the batch. */
async function writeBatch(
  runtime: SluiceRuntime,
  jobs: readonly JobSpec[],
  options: EnqueueBatchOptions,
  onComplete: string | null,
  traceContext: StoredTraceContext | null,
  started: number,
): Promise<EnqueueBatchResult> {
  const limits = chunkLimitsFor((await runtime.serverInfo()).maxAllowedPacket, runtime.options.maxRowsPerInsert);
  const db: Executor = options.trx ? fromKnex(options.trx, { foreign: true }) : runtime.db;
  const graph = graphOf(jobs, runtime.options.maxPayloadBytes);
  const result = await withTransaction(db, async (tx) => {
    if (graph) await lockLiveParents(tx, runtime.tables, graph.plan.externalParents);
    const writer = await BatchWriter.open(runtime, tx, limits, onComplete, graph?.plan ?? null, options.name ?? null);
    if (graph) await writer.writeValidated(graph.jobs);
    else await writer.write(jobs);
    const written = await writer.close();
    if (traceContext && written.batchId !== null)
      await writeBatchTraceContext(tx, runtime.tables, written.batchId, traceContext);
    return written;
  }).catch((error: unknown) => {
    throw writeSetRefusal(error) ?? error;
  });
  ringAfterCommit(runtime, options.trx, result.queues);
  runtime.events.emit('batch:enqueued', {
    batchId: result.batchId,
    count: result.count,
    chunks: result.chunks,
    durationMs: Math.round(performance.now() - started),
  });
  const written = { batchId: result.batchId, count: result.count, skipped: result.skipped };
  if (result.throttled === 0) return written;
  runtime.events.emit('enqueue:throttled', { count: result.throttled });
  return { ...written, throttled: result.throttled };
}

/**
 * A workflow's batch (some job names a ref or parents): every job validated and the graph planned
 * before the transaction opens, so a bad reference writes nothing. Null for any other batch, which
 * the writer validates job by job as before.
 */
function graphOf(jobs: readonly JobSpec[], maxPayloadBytes: number): { jobs: NormalizedJob[]; plan: GraphPlan } | null {
  const named = (spec: JobSpec) =>
    typeof spec === 'object' && spec !== null && (spec.parents !== undefined || spec.ref !== undefined);
  if (!jobs.some(named)) return null;
  const normalized = jobs.map((spec, index) => validateJob(spec, index, { maxPayloadBytes }));
  const plan = planGraph(normalized);
  return plan === null ? null : { jobs: normalized, plan };
}

/** The one queue every job of a batch names (its span's destination), or undefined for several. */
function sharedQueue(jobs: readonly JobSpec[]): string | undefined {
  const queueOf = (spec: JobSpec | undefined) => spec?.queue ?? 'default';
  const first = queueOf(jobs[0]);
  for (const spec of jobs) if (queueOf(spec) !== first) return undefined;
  return typeof first === 'string' ? first : undefined;
}

/** Validates the completion job now (nothing is written if it is bad) and renders it for the batches row. */
function storedCompletionJob(spec: JobSpec, maxPayloadBytes: number): string {
  let job: NormalizedJob;
  try {
    job = validateJob(spec, -1, { maxPayloadBytes });
  } catch (error) {
    if (error instanceof JobValidationError)
      throw new JobValidationError(-1, `onComplete.${error.field}`, error.reason);
    throw error;
  }
  if (
    spec.payload !== undefined &&
    (typeof spec.payload !== 'object' || spec.payload === null || Array.isArray(spec.payload))
  ) {
    throw new JobValidationError(-1, 'onComplete.payload', 'must be an object (the batch summary is added to it)');
  }
  if (job.runAt !== null || job.delayMs > 0 || job.idempotencyKey !== null || job.backoff !== null) {
    throw new JobValidationError(
      -1,
      'onComplete',
      "takes no runAt, delayMs, idempotencyKey or backoff (it runs when the batch finishes, with its definition's backoff)",
    );
  }
  const stored: StoredCompletionJob = {
    queue: job.queue,
    name: job.name,
    payload: job.payload,
    priority: job.priority,
    maxRetries: job.maxRetries,
  };
  return JSON.stringify(stored);
}
