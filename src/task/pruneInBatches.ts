import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import { integerIn } from '../options.ts';
import type { MaintenanceTask } from './MaintenanceTask.ts';

export interface RetentionOptions {
  /** Rows older than this are deleted; 0 keeps none (all are deleted), Infinity keeps every row. */
  readonly retentionMs: number;
  readonly batchSize: number;
  /** Most batches in one pass; the next pass goes on where this one stopped. */
  readonly maxBatches: number;
  /** Most random pause between batches (capped at 50 ms). */
  readonly jitterMs: number;
}

export function validateRetention(options: RetentionOptions): void {
  if (options.retentionMs !== Number.POSITIVE_INFINITY) integerIn('retentionMs', options.retentionMs, 0);
  integerIn('batchSize', options.batchSize, 1, 10_000);
  integerIn('maxPruneBatches', options.maxBatches, 1, 10_000);
}

/** The two statements of one prune: lock a batch of expired rows, delete those rows by key. */
export interface PruneStatements {
  /**
   * Params: retention in microseconds, batch size. `SELECT <key> … WHERE <time> < cutoff ORDER BY
   * <time> LIMIT ? FOR UPDATE SKIP LOCKED`: one batch, oldest first, skipping rows another
   * transaction holds. (A plain range DELETE waits on a locked row even just past the range's
   * end — a frozen worker's fresh history row stopped the whole pass — measured here.)
   */
  readonly lock: string;
  /** Params: keys (list). `DELETE … WHERE <key> IN (?)`. */
  readonly delete: string;
  /** The key of a locked row, as the DELETE's list takes it. */
  readonly keyOf: (row: Record<string, unknown>) => unknown;
}

/**
 * Retention, continuously: one short transaction per batch (lock, then delete by key; re-run
 * whole by withTransaction after a transient conflict), at most maxBatches batches, a jittered
 * pause between, until a short batch — never one big delete that holds locks and swells the undo
 * log, and never a wait on a row someone else holds (it stays for a later pass). Returns rows
 * deleted; a retention of Infinity deletes nothing.
 */
export async function pruneInBatches(db: Executor, sql: PruneStatements, options: RetentionOptions): Promise<number> {
  if (options.retentionMs === Number.POSITIVE_INFINITY) return 0;
  let deleted = 0;
  for (let batch = 0; batch < options.maxBatches; batch++) {
    const { locked, removed } = await withTransaction(db, async (tx) => {
      const rows = await tx.select<Record<string, unknown>>(sql.lock, [options.retentionMs * 1000, options.batchSize]);
      if (rows.length === 0) return { locked: 0, removed: 0 };
      const { affectedRows } = await tx.write(sql.delete, [rows.map(sql.keyOf)]);
      return { locked: rows.length, removed: affectedRows };
    });
    deleted += removed;
    if (locked < options.batchSize) break;
    await sleep(Math.random() * Math.min(options.jitterMs, 50));
  }
  return deleted;
}

/**
 * A retention task: `statements` (lock, delete by key) run by pruneInBatches at each pass. The
 * tables' own files hold their SQL; this is their one shape.
 */
export function retentionTask<N extends string>(
  name: N,
  db: Executor,
  statements: PruneStatements,
  options: RetentionOptions,
): MaintenanceTask<N, 'pruned'> {
  validateRetention(options);
  return { name, runOnce: async () => ({ pruned: await pruneInBatches(db, statements, options) }) };
}
