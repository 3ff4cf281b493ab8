import type { SluiceContext } from '../context.ts';
import { fromKnex } from '../db/executor.ts';
import type { JobSpec } from '../types.ts';
import type { EnqueueOptions } from './enqueueBatch.ts';
import { renderTuple } from './enqueueBatch.ts';
import { validateJob } from './validateJob.ts';

/** One job, one autocommit INSERT (or inside the caller's transaction). Returns insertId = the job's id. */
const sqlInsertJob = (t: SluiceContext['tables'], tuple: string) => `
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, max_retries, batch_id, idempotency_key, created_at)
VALUES ${tuple}`;

export interface EnqueueResult {
  readonly id: number;
}

/** Enqueues a single job (no batch row). Validation errors name index 0. */
export async function enqueueJob(ctx: SluiceContext, spec: JobSpec, options: EnqueueOptions = {}): Promise<EnqueueResult> {
  const job = validateJob(spec, 0, { maxPayloadBytes: ctx.options.maxPayloadBytes });
  const db = options.trx ? fromKnex(options.trx) : ctx.db;
  const { insertId } = await db.write(sqlInsertJob(ctx.tables, renderTuple(job, null)));
  return { id: insertId };
}
