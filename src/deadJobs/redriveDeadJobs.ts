import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { type DeadJobFilter, deadJobConditions } from './deadJobFilter.ts';

/** Params: filter values…, ?limit. Locks the next batch of matching dead jobs not yet re-driven. */
const sqlLockBatch = (t: Tables, where: string) => `
SELECT id, queue
FROM ${t.deadJobs}
WHERE ${where}
ORDER BY id
LIMIT ?
FOR UPDATE`;

/**
 * Params: ?1 dead job id. Re-inserts it as a new live job: due now, retry_times 0, its last error
 * kept. A re-drive is a deliberate re-run, so the job carries no idempotency key (its old key
 * runs out its retention). A payload stored apart is copied into the new row: the dead row keeps
 * its own until it is pruned, and every reader takes a row's inline payload. Returns insertId =
 * the new job's id.
 */
const sqlReinsert = (t: Tables) => `
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, max_retries, batch_id, idempotency_key, last_error, created_at)
SELECT d.queue, d.name, COALESCE(p.payload, d.payload), d.priority, NOW(3), d.max_retries, d.batch_id, NULL, d.last_error, NOW(3)
FROM ${t.deadJobs} d
LEFT JOIN ${t.jobPayloads} p ON p.job_id = d.id AND d.payload = ''
WHERE d.id = ?`;

/** Params: ?1 new job id, ?2 dead job id. Keeps the dead row as history, pointing at its new job. */
const sqlMarkRedriven = (t: Tables) => `
UPDATE ${t.deadJobs}
SET redriven_at = NOW(3),
    redriven_as = ?
WHERE id = ?
  AND redriven_at IS NULL`;

/**
 * Moves matching dead jobs back into the live queue in bounded batches, one short transaction
 * each (a failure loses nothing: the batch rolls back whole). Each dead row stays as history.
 * After each batch commits, `onMoved` gets the queues it wrote to, with how many jobs each (the
 * workers to ring).
 */
export async function redriveDeadJobs(
  db: Executor,
  tables: Tables,
  filter: DeadJobFilter = {},
  options: {
    batchSize?: number;
    onProgress?: (redriven: number) => void;
    onMoved?: (queues: ReadonlyMap<string, number>) => void;
  } = {},
): Promise<{ redriven: number }> {
  const batchSize = options.batchSize ?? 200;
  const { sql, params } = deadJobConditions({ ...filter, includeRedriven: false }, tables);
  let redriven = 0;
  for (;;) {
    const rows = await withTransaction(db, async (tx) => {
      const batch = await tx.select<{ id: number; queue: string }>(sqlLockBatch(tables, sql), [...params, batchSize]);
      for (const { id } of batch) {
        const { insertId } = await tx.write(sqlReinsert(tables), [Number(id)]);
        await tx.write(sqlMarkRedriven(tables), [insertId, Number(id)]);
      }
      return batch;
    });
    const moved = rows.length;
    if (moved > 0) {
      const queues = new Map<string, number>();
      for (const { queue } of rows) queues.set(queue, (queues.get(queue) ?? 0) + 1);
      options.onMoved?.(queues);
    }
    redriven += moved;
    options.onProgress?.(redriven);
    if (moved < batchSize) return { redriven };
    await sleep(Math.random() * 20);
  }
}
