import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import { withTransaction } from '../db/transaction.ts';
import { defined, integerIn, SLUICE_DEFAULTS } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS } from './MaintenanceTask.ts';

/** A retention task's options. Every field is optional. */
export interface RetentionOptions {
  /**
   * Rows older than this are deleted; 0 keeps none (all are deleted), Infinity keeps every row. A
   * function is asked at every run: the install's setting, which an operator may change meanwhile.
   * @defaultValue the install's retention of that table
   */
  readonly retentionMs?: number | (() => number);
  /** Rows per batch: each batch is one short transaction. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most batches in one run, whatever the time budget: bounds the statements of a pass. @defaultValue 200 */
  readonly maxBatches?: number;
  /** How long one run keeps deleting full batches before it stops, behind, for the next run. @defaultValue 1,000 */
  readonly budgetMs?: number;
  /** Most random pause between batches (capped at 5 ms: the workers' statements get in between). @defaultValue 1,000 */
  readonly jitterMs?: number;
}

export type ResolvedRetentionOptions = Readonly<Required<RetentionOptions>>;

/** The longest pause between two batches of one run, whatever jitterMs says. */
const MAX_BATCH_PAUSE_MS = 5;

/** Fills in the defaults (`retentionMs`: the table's own, from the install's options) and validates. */
function resolveRetention(options: RetentionOptions, retentionMs: number): ResolvedRetentionOptions {
  const { batchSize, maxBatches, jitterMs, pruneBudgetMs: budgetMs } = TASK_DEFAULTS;
  const r = { retentionMs, batchSize, maxBatches, budgetMs, jitterMs, ...defined(options) };
  validRetention(retentionOf(r));
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxPruneBatches', r.maxBatches, 1, 10_000);
  integerIn('pruneBudgetMs', r.budgetMs, 1, 600_000);
  integerIn('jitterMs', r.jitterMs, 0);
  return r;
}

/** The retention a run prunes at: the number given, or what the function given says now. */
export function retentionOf(options: Pick<ResolvedRetentionOptions, 'retentionMs'>): number {
  return typeof options.retentionMs === 'function' ? options.retentionMs() : options.retentionMs;
}

/**
 * Pure: a retention of at least `floorMs` (tables whose rows of a finished job go with it, at the
 * next run when the install keeps none), asked at every run when it is a function.
 */
export function retentionAtLeast(given: number | (() => number), floorMs: number): () => number {
  return () => Math.max(floorMs, typeof given === 'function' ? given() : given);
}

/**
 * A retention task for rows that go with a finished job's history row (its progress, its trace
 * context, its kept graph edges): pass the history retention (by default the install's); kept at
 * least 1 ms, so that without history they go at the next run.
 */
export function historyBoundTask<N extends string>(
  name: N,
  db: Executor,
  statements: PruneStatements,
  options: RetentionOptions,
): RetentionTask<N> {
  const retentionMs = retentionAtLeast(options.retentionMs ?? SLUICE_DEFAULTS.historyRetentionMs, 1);
  return new RetentionTask(name, db, statements, { ...options, retentionMs }, SLUICE_DEFAULTS.historyRetentionMs);
}

function validRetention(retentionMs: number): number {
  if (retentionMs !== Number.POSITIVE_INFINITY) integerIn('retentionMs', retentionMs, 0);
  return retentionMs;
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

/** What one run of pruneInBatches did. */
export interface PruneRun {
  readonly deleted: number;
  /** Its last batch came back full: it stopped on its budget or its batch cap, with more to delete. */
  readonly behind: boolean;
}

/**
 * Retention, continuously: one short transaction per batch (lock, then delete by key; re-run
 * whole by withTransaction after a transient conflict), a jittered pause of a few milliseconds
 * between, for as long as batches come back full — until a short batch (caught up), the time
 * budget or maxBatches (behind: the caller comes back soon). Never one big delete that holds locks
 * and swells the undo log, and never a wait on a row someone else holds (it stays for a later
 * run). A retention of Infinity deletes nothing.
 */
export async function pruneInBatches(
  db: Executor,
  sql: PruneStatements,
  options: ResolvedRetentionOptions,
): Promise<PruneRun> {
  const retentionMs = validRetention(retentionOf(options));
  if (retentionMs === Number.POSITIVE_INFINITY) return { deleted: 0, behind: false };
  const deadline = performance.now() + options.budgetMs;
  let deleted = 0;
  for (let batch = 1; ; batch++) {
    const { locked, removed } = await withTransaction(db, async (tx) => {
      const rows = await tx.select<Record<string, unknown>>(sql.lock, [retentionMs * 1000, options.batchSize]);
      if (rows.length === 0) return { locked: 0, removed: 0 };
      const also = sql.alsoDelete ? { sql: sql.alsoDelete.sql, keys: sql.alsoDelete.keysOf(rows) } : null;
      if (also && also.keys.length > 0) await tx.write(also.sql, [also.keys]);
      const { affectedRows } = await tx.write(sql.delete, [rows.map(sql.keyOf)]);
      return { locked: rows.length, removed: affectedRows };
    });
    deleted += removed;
    if (locked < options.batchSize) return { deleted, behind: false };
    if (batch >= options.maxBatches || performance.now() >= deadline) return { deleted, behind: true };
    await sleep(Math.random() * Math.min(options.jitterMs, MAX_BATCH_PAUSE_MS));
  }
}

/**
 * A retention task: its table's `statements` (lock, delete by key) run by pruneInBatches at each
 * run. `behind` says the last run stopped with a full batch: the maintenance process then runs the
 * task again after a short jittered pause instead of at its next tick, so pruning keeps pace with
 * whatever rate rows arrive at. The tables' own files hold their SQL and name the task; this is
 * their one shape (a new table's retention is one more of these).
 */
export class RetentionTask<N extends string> implements MaintenanceTask<N, 'pruned', ResolvedRetentionOptions> {
  readonly options: ResolvedRetentionOptions;
  #behind = false;

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

  get behind(): boolean {
    return this.#behind;
  }

  /** `passLeftMs`: what is left of the pass's budget (PassBudget), when smaller than budgetMs. */
  async runOnce(passLeftMs = Number.POSITIVE_INFINITY): Promise<{ pruned: number }> {
    const budgetMs = Math.min(this.options.budgetMs, passLeftMs);
    const run = await pruneInBatches(this.db, this.statements, { ...this.options, budgetMs });
    this.#behind = run.behind;
    return { pruned: run.deleted };
  }
}
