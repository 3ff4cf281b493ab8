import { type Executor, fromKnex } from '../db/executor.ts';
import { type ChunkLimits, chunkLimitsFor } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import { writeOnPool } from '../db/writeOnPool.ts';
import { JobValidationError } from '../errors.ts';
import { keyHolder, linkIdempotencyKeys, reserveIdempotencyKeys } from '../idempotency/reserveIdempotencyKeys.ts';
import { linkThrottleKey, reserveThrottleKeys, throttleHolder } from '../idempotency/reserveThrottleKeys.ts';
import type { JobSpec } from '../model/job.ts';
import { type NormalizedJob, validateJob } from '../model/validateJob.ts';
import { reserveGroupStarts } from '../queues/reserveGroupStarts.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { activeTracer } from '../tracing/activeTracer.ts';
import { ATTR, inSendSpan } from '../tracing/jobSpans.ts';
import { type StoredTraceContext, storedContextOf } from '../tracing/traceContext.ts';
import { writeTraceContext } from '../tracing/writeTraceContexts.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import { debounceJob, pointDebounce } from './debounceJob.ts';
import type { EnqueueOptions } from './enqueueBatch.ts';
import { columnsFor, insertJobsPrefix, type JobColumns, renderJobTuple } from './jobInsert.ts';
import { storedApart } from './payloadApart.ts';
import { apartPayload, writeApartPayloads } from './writeApartPayloads.ts';
import { writeMember } from './writeGroupMembers.ts';

export interface EnqueueResult {
  /**
   * The job's id — for a duplicate, the id of the job that holds the key; for a debounced job, the
   * waiting job it replaced; for a throttled one, the job that took the window (0 if a batch took it).
   */
  readonly id: number;
  /** True when the idempotency key was taken: nothing was written. */
  readonly duplicate: boolean;
  /** True when the throttle window of the job's key was taken: nothing was written. */
  readonly throttled?: boolean;
  /** True when a waiting job of the debounce key took this one's payload: no new job was written. */
  readonly debounced?: boolean;
}

/**
 * Enqueues a single job (no batch row): one autocommit INSERT, or, with an idempotency key or a
 * payload stored apart (over 1 KiB: payloadApart.ts), a short transaction that reserves the key
 * first and writes the payload's row after the job's. Validation errors name index 0. With an
 * OpenTelemetry SDK registered, the write runs in a `send <queue>` span whose context is kept
 * with the job in the same transaction (src/tracing/); without one, nothing of that runs.
 */
export async function enqueueJob(
  runtime: SluiceRuntime,
  spec: JobSpec,
  options: EnqueueOptions = {},
): Promise<EnqueueResult> {
  const job = validateJob(spec, 0, { maxPayloadBytes: runtime.options.maxPayloadBytes });
  if (job.graph !== null && job.graph.parents.length > 0) {
    throw new JobValidationError(0, 'parents', 'need enqueueBatch (a workflow is written with its batch)');
  }
  const tracer = activeTracer();
  if (tracer === undefined) return writeJob(runtime, job, options, null);
  return inSendSpan(tracer, job.queue, { [ATTR.jobName]: job.name }, async (span) => {
    const result = await writeJob(runtime, job, options, storedContextOf(span.spanContext()));
    span.setAttribute(ATTR.messageId, String(result.id));
    if (result.duplicate) span.setAttribute(ATTR.duplicate, true);
    return result;
  });
}

async function writeJob(
  runtime: SluiceRuntime,
  job: NormalizedJob,
  options: EnqueueOptions,
  traceContext: StoredTraceContext | null,
): Promise<EnqueueResult> {
  const db = options.trx ? fromKnex(options.trx, { foreign: true }) : runtime.db;
  const columns = columnsFor([job], null);
  // One job, one INSERT: insertId = the job's id.
  const sql = insertJobsPrefix(runtime.tables, columns) + renderJobTuple(job, null, columns);
  const limits = chunkLimitsFor((await runtime.serverInfo()).maxAllowedPacket, 1);
  const bytes = Buffer.byteLength(sql);
  if (bytes > limits.maxStatementBytes) {
    throw new JobValidationError(
      0,
      'payload',
      `is ${bytes} bytes once escaped for the server, over its max_allowed_packet (${limits.maxStatementBytes} usable)`,
    );
  }
  const apart = storedApart(job.payload) ? apartPayload(job.payload, 0, limits) : null;
  const wrote = new Map([[job.queue, 1]]);
  const flow = job.flow.group !== null || job.flow.throttle !== null || job.flow.debounce !== null;
  if (job.idempotencyKey === null && traceContext === null && apart === null && !flow) {
    // On sluice's own pool, past knex's query builder (writeOnPool): the common enqueue's one statement.
    const { insertId } = options.trx || !db.readCommitted ? await db.write(sql) : await writeOnPool(runtime.knex, sql);
    ringAfterCommit(runtime, options.trx, wrote);
    return { id: insertId, duplicate: false };
  }

  const keyed = job.idempotencyKey === null ? null : { queue: job.queue, idempotencyKey: job.idempotencyKey };
  const result = await withTransaction(db, async (tx) => {
    const reservation = keyed ? await reserveIdempotencyKeys(tx, runtime.tables, [keyed], limits) : null;
    if (keyed && reservation?.won.size === 0)
      return { id: (await keyHolder(tx, runtime.tables, keyed)) ?? 0, duplicate: true };
    const flowed = flow ? await flowOf(tx, runtime, job, columns, limits) : { sql };
    if ('result' in flowed) return flowed.result;
    const { insertId } = await tx.write(flowed.sql);
    if (flow) await afterInsert(tx, runtime, job, flowed, insertId);
    if (apart) await writeApartPayloads(tx, runtime.tables, [insertId], [apart], limits);
    if (reservation) await linkIdempotencyKeys(tx, runtime.tables, reservation, insertId, limits);
    if (traceContext) await writeTraceContext(tx, runtime.tables, { jobId: insertId }, traceContext);
    return { id: insertId, duplicate: false };
  });
  if (result.throttled) runtime.events.emit('enqueue:throttled', { count: 1 });
  if (!result.duplicate && !result.throttled) ringAfterCommit(runtime, options.trx, wrote);
  return result;
}

/** The INSERT of a job with flow control, or the result when none is written (throttled, debounced). */
type Flowed = { sql: string; throttleOwner?: string } | { result: EnqueueResult };

/**
 * Inside the transaction, before the INSERT: a throttle window taken drops the job; a debounce key
 * whose job still waits takes this one's payload; a rate-limited group reserves the job's start.
 */
async function flowOf(
  tx: Executor,
  runtime: SluiceRuntime,
  job: NormalizedJob,
  columns: JobColumns,
  limits: ChunkLimits,
): Promise<Flowed> {
  const { tables } = runtime;
  const { throttle, debounce } = job.flow;
  let throttleOwner: string | undefined;
  if (throttle !== null) {
    const window = { queue: job.queue, ...throttle };
    const { owner, took } = await reserveThrottleKeys(tx, tables, [window], limits);
    if (took.size === 0)
      return { result: { id: await throttleHolder(tx, tables, window), duplicate: false, throttled: true } };
    throttleOwner = owner;
  }
  let due = job;
  if (debounce !== null) {
    const outcome = await debounceJob(tx, tables, job as Parameters<typeof debounceJob>[2]);
    if (outcome.replaced) return { result: { id: outcome.id, duplicate: false, debounced: true } };
    due = { ...job, delayMs: debounce.delayMs };
  }
  const [startAtMs = null] =
    job.flow.group === null
      ? []
      : await reserveGroupStarts(
          tx,
          tables,
          [
            {
              queue: job.queue,
              group: job.flow.group,
              rate: job.flow.groupRate,
              runAt: due.runAt,
              delayMs: due.delayMs,
            },
          ],
          limits,
        );
  const sql = insertJobsPrefix(tables, columns) + renderJobTuple(due, null, columns, undefined, startAtMs);
  return throttleOwner === undefined ? { sql } : { sql, throttleOwner };
}

/** After the INSERT: the throttle window and the debounce key name the new job. */
async function afterInsert(
  tx: Executor,
  runtime: SluiceRuntime,
  job: NormalizedJob,
  flowed: { throttleOwner?: string },
  id: number,
): Promise<void> {
  const { throttle } = job.flow;
  if (throttle !== null && flowed.throttleOwner !== undefined)
    await linkThrottleKey(tx, runtime.tables, { queue: job.queue, ...throttle }, flowed.throttleOwner, id);
  await pointDebounce(tx, runtime.tables, job, id);
  if (job.flow.group !== null) await writeMember(tx, runtime.tables, job.queue, job.flow.group, id);
}
