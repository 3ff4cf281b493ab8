import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import { completionJobKey, type StoredCompletionJob } from './completionJob.ts';
import { getBatch } from './getBatch.ts';

/**
 * Params: ?1 after id, ?2 limit. One page of unfinished batches in id order (ix_unfinished), and
 * for each whether any of its jobs is still live (one ix_batch probe per batch, in the statement:
 * a page costs one round trip, not one per batch).
 */
const sqlUnfinished = (t: Tables) => `
SELECT b.id,
       EXISTS (SELECT 1 FROM ${t.jobs} j WHERE j.batch_id = b.id) AS live
FROM ${t.batches} b
WHERE b.finished_at IS NULL
  AND b.id > ?
ORDER BY b.id
LIMIT ?`;

/**
 * Params: ?1 batch id. Marks the batch finished; matches only if nobody did yet, so exactly one
 * caller ever sees affectedRows 1 — and only that caller enqueues the completion job, in the same
 * transaction. Returns affectedRows.
 */
const sqlMarkFinished = (t: Tables) => `
UPDATE ${t.batches}
SET finished_at = NOW(3)
WHERE id = ?
  AND finished_at IS NULL`;

/** Params: ?1 batch id. The batch's completion job spec (JSON), if any. */
const sqlOnComplete = (t: Tables) => `
SELECT on_complete
FROM ${t.batches}
WHERE id = ?`;

/**
 * Params: ?1 queue, ?2 name, ?3 payload JSON, ?4 priority, ?5 max_retries, ?6 idempotency key.
 * Enqueues a batch's completion job, due now.
 */
const sqlInsertCompletionJob = (t: Tables) => `
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, max_retries, idempotency_key, created_at)
VALUES (?, ?, ?, ?, NOW(3), ?, ?, NOW(3))`;

/** finishBatches' options. Every field is optional. */
export interface FinishBatchesOptions {
  /** Unfinished batches read per page. @defaultValue 500 */
  readonly batchSize?: number;
  /** Told of each batch this pass finished (the maintenance process emits batch:finished). @defaultValue none */
  readonly onFinished?: ((batch: { batchId: number; completionJob: boolean }) => void) | null;
}

export type ResolvedFinishBatchesOptions = Readonly<Required<FinishBatchesOptions>>;

function resolveFinishBatchesOptions(options: FinishBatchesOptions): ResolvedFinishBatchesOptions {
  const r = { batchSize: TASK_DEFAULTS.batchSize, onFinished: null, ...defined(options) };
  integerIn('batchSize', r.batchSize, 1, 10_000);
  return r;
}

/**
 * The batch-finishing service: for each unfinished batch with no live job, mark it finished and
 * enqueue its completion job in the same transaction (re-run whole by withTransaction after a
 * transient conflict) — exactly once, even with several maintenance processes. Works in bounded
 * pages.
 */
export function finishBatches(
  taskDb: TaskDb,
  options: FinishBatchesOptions = {},
): MaintenanceTask<'finishBatches', 'batches', ResolvedFinishBatchesOptions> {
  return new BatchFinisher(taskDb, options);
}

class BatchFinisher implements MaintenanceTask<'finishBatches', 'batches', ResolvedFinishBatchesOptions> {
  readonly name = 'finishBatches';
  readonly options: ResolvedFinishBatchesOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  /** Where the next run goes on from: the last batch id the last run read (0: the start). */
  #afterId = 0;

  constructor({ db, tables }: TaskDb, options: FinishBatchesOptions) {
    this.options = resolveFinishBatchesOptions(options);
    this.#db = db;
    this.#tables = tables;
  }

  /**
   * Pages through the unfinished batches from where the last run stopped, finishing those with no
   * live job left, until the end of the list (the next run starts again from the first) or, after
   * a page, until `passLeftMs` (what is left of the pass's budget, PassBudget) has gone by.
   */
  async runOnce(passLeftMs = Number.POSITIVE_INFINITY): Promise<{ batches: number }> {
    const deadline = performance.now() + passLeftMs;
    let batches = 0;
    for (;;) {
      const page = await this.#db.select<{ id: number | string; live: number | string }>(sqlUnfinished(this.#tables), [
        this.#afterId,
        this.options.batchSize,
      ]);
      for (const id of page.filter((b) => Number(b.live) === 0).map((b) => Number(b.id))) {
        const completionJob = await this.#finish(id);
        if (completionJob === null) continue;
        batches++;
        this.options.onFinished?.({ batchId: id, completionJob });
      }
      if (page.length < this.options.batchSize) {
        this.#afterId = 0;
        return { batches };
      }
      this.#afterId = Number(page[page.length - 1]?.id);
      if (performance.now() >= deadline) return { batches };
    }
  }

  /**
   * Marks one batch finished and enqueues its completion job, in one transaction. Returns whether
   * it had a completion job, or null when another process finished the batch first.
   */
  #finish(id: number): Promise<boolean | null> {
    return withTransaction(this.#db, async (tx) => {
      const { affectedRows } = await tx.write(sqlMarkFinished(this.#tables), [id]);
      if (affectedRows !== 1) return null;
      const [row] = await tx.select<{ on_complete: string | null }>(sqlOnComplete(this.#tables), [id]);
      if (!row?.on_complete) return false;
      await this.#enqueueCompletionJob(tx, id, JSON.parse(row.on_complete) as StoredCompletionJob);
      return true;
    });
  }

  /** Enqueues the batch's completion job, its payload extended with the batch's final counts. */
  async #enqueueCompletionJob(tx: Executor, id: number, job: StoredCompletionJob): Promise<void> {
    const status = await getBatch(tx, this.#tables, id);
    const payload = JSON.stringify({
      ...(JSON.parse(job.payload) as object),
      batch: status && {
        id,
        size: status.size,
        succeeded: status.succeeded,
        dead: status.dead,
        cancelled: status.cancelled,
      },
    });
    await tx.write(sqlInsertCompletionJob(this.#tables), [
      job.queue,
      job.name,
      payload,
      job.priority,
      job.maxRetries,
      completionJobKey(id),
    ]);
  }
}
