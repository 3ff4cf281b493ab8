import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS } from './MaintenanceTask.ts';

/** A retention task's options. Every field is optional. */
export interface RetentionOptions {
  /**
   * Rows older than this are deleted; 0 keeps none (all are deleted), Infinity keeps every row.
   * @defaultValue the install's retention of that table
   */
  readonly retentionMs?: number;
  /** Rows per batch. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most batches in one pass; the next pass goes on where this one stopped. @defaultValue 20 */
  readonly maxBatches?: number;
  /** Most random pause between batches (capped at 50 ms). @defaultValue 1,000 */
  readonly jitterMs?: number;
}

export type ResolvedRetentionOptions = Readonly<Required<RetentionOptions>>;

/** Fills in the defaults (`retentionMs`: the table's own, from the install's options) and validates. */
function resolveRetention(options: RetentionOptions, retentionMs: number): ResolvedRetentionOptions {
  const { batchSize, maxBatches, jitterMs } = TASK_DEFAULTS;
  const r = { retentionMs, batchSize, maxBatches, jitterMs, ...defined(options) };
  if (r.retentionMs !== Number.POSITIVE_INFINITY) integerIn('retentionMs', r.retentionMs, 0);
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxPruneBatches', r.maxBatches, 1, 10_000);
  integerIn('jitterMs', r.jitterMs, 0);
  return r;
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
  /**
   * What goes with some of the rows, deleted first in the same transaction: `sql` (params: keys,
   * a list) for the locked rows `keysOf` picks; none picked, no statement (payloads stored apart).
   */
  readonly alsoDelete?: {
    readonly sql: string;
    readonly keysOf: (rows: readonly Record<string, unknown>[]) => unknown[];
  };
}

/**
 * Retention, continuously: one short transaction per batch (lock, then delete by key; re-run
 * whole by withTransaction after a transient conflict), at most maxBatches batches, a jittered
 * pause between, until a short batch — never one big delete that holds locks and swells the undo
 * log, and never a wait on a row someone else holds (it stays for a later pass). Returns rows
 * deleted; a retention of Infinity deletes nothing.
 */
export async function pruneInBatches(
  db: Executor,
  sql: PruneStatements,
  options: ResolvedRetentionOptions,
): Promise<number> {
  if (options.retentionMs === Number.POSITIVE_INFINITY) return 0;
  let deleted = 0;
  for (let batch = 0; batch < options.maxBatches; batch++) {
    const { locked, removed } = await withTransaction(db, async (tx) => {
      const rows = await tx.select<Record<string, unknown>>(sql.lock, [options.retentionMs * 1000, options.batchSize]);
      if (rows.length === 0) return { locked: 0, removed: 0 };
      const also = sql.alsoDelete ? { sql: sql.alsoDelete.sql, keys: sql.alsoDelete.keysOf(rows) } : null;
      if (also && also.keys.length > 0) await tx.write(also.sql, [also.keys]);
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
 * A retention task: its table's `statements` (lock, delete by key) run by pruneInBatches at each
 * pass. The tables' own files hold their SQL and name the task; this is their one shape.
 */
export class RetentionTask<N extends string> implements MaintenanceTask<N, 'pruned', ResolvedRetentionOptions> {
  readonly options: ResolvedRetentionOptions;

  /** `tableRetentionMs` is the retention used when the options give none. */
  constructor(
    readonly name: N,
    private readonly db: Executor,
    private readonly statements: PruneStatements,
    options: RetentionOptions,
    tableRetentionMs: number,
  ) {
    this.options = resolveRetention(options, tableRetentionMs);
  }

  async runOnce(): Promise<{ pruned: number }> {
    return { pruned: await pruneInBatches(this.db, this.statements, this.options) };
  }
}
