import { fromKnex } from '../db/executor.ts';
import { chunkLimitsFor } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import { keyHolder, linkIdempotencyKeys, reserveIdempotencyKeys } from '../idempotency/reserveIdempotencyKeys.ts';
import type { JobSpec } from '../model/job.ts';
import { validateJob } from '../model/validateJob.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import type { EnqueueOptions } from './enqueueBatch.ts';
import { columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';

export interface EnqueueResult {
  /** The job's id — for a duplicate, the id of the job that holds the key. */
  readonly id: number;
  /** True when the idempotency key was taken: nothing was written. */
  readonly duplicate: boolean;
}

/**
 * Enqueues a single job (no batch row): one autocommit INSERT, or, with an idempotency key, a
 * short transaction that reserves the key first. Validation errors name index 0.
 */
export async function enqueueJob(
  runtime: SluiceRuntime,
  spec: JobSpec,
  options: EnqueueOptions = {},
): Promise<EnqueueResult> {
  const job = validateJob(spec, 0, { maxPayloadBytes: runtime.options.maxPayloadBytes });
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
  const wrote = new Map([[job.queue, 1]]);
  if (job.idempotencyKey === null) {
    const { insertId } = await db.write(sql);
    ringAfterCommit(runtime, options.trx, wrote);
    return { id: insertId, duplicate: false };
  }

  const keyed = { queue: job.queue, idempotencyKey: job.idempotencyKey };
  const result = await withTransaction(db, async (tx) => {
    const reservation = await reserveIdempotencyKeys(tx, runtime.tables, [keyed], limits);
    if (reservation.won.size === 0) return { id: (await keyHolder(tx, runtime.tables, keyed)) ?? 0, duplicate: true };
    const { insertId } = await tx.write(sql);
    await linkIdempotencyKeys(tx, runtime.tables, reservation, insertId, limits);
    return { id: insertId, duplicate: false };
  });
  if (!result.duplicate) ringAfterCommit(runtime, options.trx, wrote);
  return result;
}
