import type { SluiceContext } from '../context.ts';
import { fromKnex } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import type { JobSpec } from '../types.ts';
import type { EnqueueOptions } from './enqueueBatch.ts';
import { columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';
import { chunkLimitsFor } from './planChunks.ts';
import { keyHolder, linkIdempotencyKeys, reserveIdempotencyKeys } from './reserveIdempotencyKeys.ts';
import { validateJob } from './validateJob.ts';

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
export async function enqueueJob(ctx: SluiceContext, spec: JobSpec, options: EnqueueOptions = {}): Promise<EnqueueResult> {
  const job = validateJob(spec, 0, { maxPayloadBytes: ctx.options.maxPayloadBytes });
  const db = options.trx ? fromKnex(options.trx) : ctx.db;
  const columns = columnsFor([job], null);
  // One job, one INSERT: insertId = the job's id.
  const sql = insertJobsPrefix(ctx.tables, columns) + renderJobTuple(job, null, columns);
  if (job.idempotencyKey === null) return { id: (await db.write(sql)).insertId, duplicate: false };

  const keyed = { queue: job.queue, idempotencyKey: job.idempotencyKey };
  const limits = chunkLimitsFor((await ctx.serverInfo()).maxAllowedPacket, 1);
  return withTransaction(db, async (tx) => {
    const { owner, won } = await reserveIdempotencyKeys(tx, ctx.tables, [keyed], limits);
    if (won.size === 0) return { id: (await keyHolder(tx, ctx.tables, keyed)) ?? 0, duplicate: true };
    const { insertId } = await tx.write(sql);
    await linkIdempotencyKeys(tx, ctx.tables, owner);
    return { id: insertId, duplicate: false };
  });
}
