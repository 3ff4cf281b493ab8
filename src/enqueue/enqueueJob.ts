import { type Executor, fromKnex } from '../db/executor.ts';
import { type ChunkLimits, chunkLimitsFor, MIN_STATEMENT_BYTES } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import { keyHolder, linkIdempotencyKeys, reserveIdempotencyKeys } from '../idempotency/reserveIdempotencyKeys.ts';
import { linkThrottleKey, reserveThrottleKeys, throttleHolder } from '../idempotency/reserveThrottleKeys.ts';
import type { JobSpec } from '../model/job.ts';
import { storedApart } from '../model/storedPayload.ts';
import { type NormalizedJob, validateJob } from '../model/validateJob.ts';
import { type GroupStart, reserveGroupStarts } from '../queues/reserveGroupStarts.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { activeTracer } from '../tracing/activeTracer.ts';
import { ATTR, inSendSpan } from '../tracing/jobSpans.ts';
import { storedContextOf } from '../tracing/traceContext.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import { debounceJob, pointDebounce } from './debounceJob.ts';
import { coalescerOf } from './EnqueueCoalescer.ts';
import type { EnqueueOptions } from './enqueueBatch.ts';
import { GroupEntry } from './GroupEntry.ts';
import { assertRowFits, columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';
import { escapedLengthAtMost, singleJobInsert } from './singleJobInsert.ts';
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
 * Enqueues a single job (no batch row). Two paths, chosen per job:
 *
 * - **one statement** (the common job: no idempotency key, a payload kept in its row; a trace
 *   context goes in the row too): one autocommit INSERT on sluice's own pool, prepared (singleJobInsert,
 *   SingleWriteLane: one round trip), or one INSERT inside the caller's transaction. Its statement
 *   is below any server's packet limit (MIN_STATEMENT_BYTES), so the limit is not even looked up.
 * - **a short transaction** (anything that writes or reads a second row: an idempotency key reserved
 *   first, a payload stored apart (over 1 KiB: model/storedPayload.ts) written after the job's row, ):
 *   writeInTransaction. A job that needs more than its own row
 *   goes there (needsTransaction).
 *
 * Outside a caller's transaction, calls in flight together in one process share a commit
 * (EnqueueCoalescer: one multi-row INSERT and one commit; each caller its own id, its own error, its
 * answer once the commit returned); a lone call goes at once, by the paths above.
 *
 * Validation errors name index 0, before anything is sent. With an OpenTelemetry SDK registered,
 * the write runs in a `send <queue>` span whose context is written in the job's row
 * (jobs.traceparent, src/tracing/); without one, nothing of that runs. The workers of the queue are rung
 * once the job is visible (ringAfterCommit: the Ringer gathers rings, never a round trip of the enqueue's).
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
  // Awaited rather than returned: an async function that returns a promise adopts it two ticks later.
  if (tracer === undefined) return await writeJob(runtime, job, options);
  return inSendSpan(tracer, job.queue, { [ATTR.jobName]: job.name }, async (span) => {
    // The context goes in the job's row: a traced job is one statement as an untraced one is.
    const result = await writeJob(runtime, { ...job, trace: storedContextOf(span.spanContext()) }, options);
    span.setAttribute(ATTR.messageId, String(result.id));
    if (result.duplicate) span.setAttribute(ATTR.duplicate, true);
    return result;
  });
}

/** Pure: whether writing `job` takes more than its own row (and so a transaction of sluice's). */
function needsTransaction(job: NormalizedJob): boolean {
  return job.idempotencyKey !== null || hasFlowControl(job) || storedApart(job.storedPayload);
}

/** Pure: the job names a group, a debounce or a throttle: rows besides its own are read or written. */
function hasFlowControl(job: NormalizedJob): boolean {
  return job.flow.group !== null || job.flow.throttle !== null || job.flow.debounce !== null;
}

/**
 * Outside a caller's transaction, a job that is only its row (its trace context in it) goes through
 * the install's EnqueueCoalescer: alone at once when no commit of the process is under way, else
 * in the next commit with every job that came meanwhile. A job whose key or flow control may drop
 * it or read other rows, or whose payload is stored apart, is written alone, as inside a transaction.
 */
function writeJob(runtime: SluiceRuntime, job: NormalizedJob, options: EnqueueOptions): Promise<EnqueueResult> {
  if (options.trx || needsTransaction(job)) return writeAlone(runtime, job, options);
  return coalescerOf(runtime, (alone) => writeAlone(runtime, alone, NO_OPTIONS)).write(job);
}

const NO_OPTIONS: EnqueueOptions = {};

/** One job's write, as it was before coalescing: one INSERT, or a short transaction (writeInTransaction). */
async function writeAlone(runtime: SluiceRuntime, job: NormalizedJob, options: EnqueueOptions): Promise<EnqueueResult> {
  if (needsTransaction(job)) return writeInTransaction(runtime, job, options);
  // One job, one INSERT: insertId = the job's id. At most 3 bytes per UTF-16 unit: below
  // MIN_STATEMENT_BYTES, no server refuses it; a longer one goes where the limit is looked up.
  const lane = options.trx ? null : runtime.writeLane;
  let insertId: number;
  if (lane) {
    // On sluice's own pool: prepared, its text one of a few per install.
    const statement = singleJobInsert(runtime.tables, job);
    if (escapedLengthAtMost(statement) * 3 > MIN_STATEMENT_BYTES) return writeInTransaction(runtime, job, options);
    ({ insertId } = await lane.write(statement));
  } else {
    const columns = columnsFor([job], null);
    const sql = insertJobsPrefix(runtime.tables, columns) + renderJobTuple(job, null, columns);
    if (sql.length * 3 > MIN_STATEMENT_BYTES) return writeInTransaction(runtime, job, options);
    const db = options.trx ? fromKnex(options.trx, { foreign: true }) : runtime.db;
    ({ insertId } = await db.write(sql));
  }
  ringAfterCommit(runtime, options.trx, new Map([[job.queue, 1]]));
  return { id: insertId, duplicate: false };
}

/**
 * The job's INSERT with what it needs beside it, in one transaction (a savepoint in the caller's):
 * its idempotency key reserved first (a duplicate writes nothing and returns the holder's id), its
 * group's slot settled (a job of a limited group is written held: GroupEntry), its payload's row
 * after it. Statements are checked against the server's packet limit first
 * (JobValidationError, nothing written).
 */
async function writeInTransaction(
  runtime: SluiceRuntime,
  job: NormalizedJob,
  options: EnqueueOptions,
): Promise<EnqueueResult> {
  const db = options.trx ? fromKnex(options.trx, { foreign: true }) : runtime.db;
  const columns = columnsFor([job], null);
  const prefix = insertJobsPrefix(runtime.tables, columns);
  const tuple = renderJobTuple(job, null, columns);
  const sql = prefix + tuple;
  const limits = chunkLimitsFor((await runtime.serverInfo()).maxAllowedPacket, 1);
  assertRowFits(prefix, tuple, 0, limits.maxStatementBytes);
  const apart = storedApart(job.storedPayload) ? apartPayload(job.storedPayload, 0, limits) : null;
  const wrote = new Map([[job.queue, 1]]);
  const flow = hasFlowControl(job);
  const keyed = job.idempotencyKey === null ? null : { queue: job.queue, idempotencyKey: job.idempotencyKey };
  const result = await withTransaction(db, async (tx) => {
    wrote.set(job.queue, 1);
    const reservation = keyed ? await reserveIdempotencyKeys(tx, runtime.tables, [keyed], limits) : null;
    if (keyed && reservation?.won.size === 0)
      return { id: (await keyHolder(tx, runtime.tables, keyed)) ?? 0, duplicate: true };
    const flowed = flow ? await flowOf(tx, runtime, job, limits) : { due: job, start: null };
    if ('result' in flowed) return flowed.result;
    const groups = job.group === null ? null : new GroupEntry(tx, runtime.tables);
    await groups?.resolve([job]);
    const place = groups?.placement(job, 0, false);
    const { insertId } = await tx.write(
      flow
        ? insertJobsPrefix(runtime.tables, columns) + renderJobTuple(flowed.due, null, columns, place, flowed.start)
        : sql,
    );
    if (flow) await afterInsert(tx, runtime, job, flowed, insertId);
    if (apart) await writeApartPayloads(tx, runtime.tables, [insertId], [apart], limits);
    if (reservation) await linkIdempotencyKeys(tx, runtime.tables, reservation, insertId, limits);
    if (groups !== null && place?.held) {
      // Released to its reserved start, if its group's rate reserved one.
      const start = flowed.start;
      await groups.hold(
        insertId,
        start === null ? flowed.due : { ...flowed.due, runAt: new Date(start.atMs), delayMs: 0 },
      );
      // Rung only when its group had room for it.
      wrote.set(job.queue, (await groups.close()).get(job.queue) ?? 0);
    }
    return { id: insertId, duplicate: false };
  });
  if (result.throttled) runtime.events.emit('enqueue:throttled', { count: 1 });
  if (!result.duplicate && !result.throttled && (wrote.get(job.queue) ?? 0) > 0)
    ringAfterCommit(runtime, options.trx, wrote);
  return result;
}

/** A job with flow control as it is to be written, or the result when none is written (throttled, debounced). */
type Flowed = { due: NormalizedJob; start: GroupStart | null; throttleOwner?: string } | { result: EnqueueResult };

/**
 * Inside the transaction, before the INSERT: a throttle window taken drops the job; a debounce key
 * whose job still waits takes this one's payload; a rate-limited group reserves the job's start.
 */
async function flowOf(tx: Executor, runtime: SluiceRuntime, job: NormalizedJob, limits: ChunkLimits): Promise<Flowed> {
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
  const [start = null] =
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
  return throttleOwner === undefined ? { due, start } : { due, start, throttleOwner };
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
