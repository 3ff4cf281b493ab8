import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { defined, integerIn, SLUICE_DEFAULTS } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import { pruneInBatches } from '../task/pruneInBatches.ts';
import { expireIdempotencyKeys } from './expireIdempotencyKeys.ts';

/**
 * Params: ?1 microseconds past expiry (0: expired now), ?2 batch size. Locks one bounded batch of
 * keys whose retention ended, oldest first (ix_expires), skipping rows another transaction holds
 * (an enqueue taking an expired key over, in the application's own long transaction). Returns
 * their primary keys.
 */
const sqlLockExpired = (t: Tables) => `
SELECT queue, idempotency_key
FROM ${t.idempotencyKeys}
WHERE expires_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY expires_at
LIMIT ?
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 (queue, key) pairs (list, locked). affectedRows = keys freed. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.idempotencyKeys}
WHERE (queue, idempotency_key) IN (?)`;

/** Params: ?1 after job id, ?2 limit. Live keys (no expiry yet), in job id order (ix_expires). */
const sqlLiveKeys = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE expires_at IS NULL
  AND job_id > ?
ORDER BY job_id
LIMIT ?`;

/** Params: ?1 ids (list). Which of those jobs are still live. */
const sqlLiveJobs = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)`;

/** pruneIdempotencyKeys' options. Every field is optional. */
export interface PruneIdempotencyKeysOptions {
  /** How long a finished job's key keeps refusing duplicates (an install option). @defaultValue 24 h */
  readonly retentionMs?: number;
  /** Keys per statement. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most delete batches in one run. @defaultValue 200 */
  readonly maxBatches?: number;
  /** How long one run keeps deleting full batches. @defaultValue 1,000 */
  readonly budgetMs?: number;
}

export type ResolvedPruneIdempotencyKeysOptions = Readonly<Required<PruneIdempotencyKeysOptions>>;

function resolvePruneIdempotencyKeysOptions(options: PruneIdempotencyKeysOptions): ResolvedPruneIdempotencyKeysOptions {
  const r = {
    retentionMs: SLUICE_DEFAULTS.idempotencyRetentionMs,
    batchSize: TASK_DEFAULTS.batchSize,
    maxBatches: TASK_DEFAULTS.maxBatches,
    budgetMs: TASK_DEFAULTS.pruneBudgetMs,
    ...defined(options),
  };
  integerIn('idempotencyRetentionMs', r.retentionMs, 1);
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxPruneBatches', r.maxBatches, 1, 10_000);
  integerIn('pruneBudgetMs', r.budgetMs, 1, 600_000);
  return r;
}

/**
 * Idempotency-key retention, one bounded step per maintenance pass:
 * 1. orphans: keys still marked live whose job is gone (the worker's expiry write was lost) get
 *    their retention clock started — scanning one page per pass from a cursor that wraps;
 * 2. expired keys are deleted in small batches by pruneInBatches, freeing them for new jobs: each
 *    a short transaction (lock with SKIP LOCKED, delete by primary key) that never waits on a key
 *    someone else holds, while batches come back full, within a time budget and a batch cap;
 *    `behind` when it stopped with more to delete, as every retention task.
 * The orphan statements are autocommit, re-run by the Executor after a transient conflict.
 */
export function pruneIdempotencyKeys(
  taskDb: TaskDb,
  options: PruneIdempotencyKeysOptions = {},
): MaintenanceTask<'pruneIdempotencyKeys', 'orphansExpired' | 'pruned', ResolvedPruneIdempotencyKeysOptions> {
  return new IdempotencyKeyPruner(taskDb, options);
}

class IdempotencyKeyPruner
  implements MaintenanceTask<'pruneIdempotencyKeys', 'orphansExpired' | 'pruned', ResolvedPruneIdempotencyKeysOptions>
{
  readonly name = 'pruneIdempotencyKeys';
  readonly options: ResolvedPruneIdempotencyKeysOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  /** Where the next orphan scan starts (a job id; 0 after a short page: the scan wraps). */
  #cursor = 0;
  #behind = false;

  constructor({ db, tables }: TaskDb, options: PruneIdempotencyKeysOptions) {
    this.options = resolvePruneIdempotencyKeysOptions(options);
    this.#db = db;
    this.#tables = tables;
  }

  get behind(): boolean {
    return this.#behind;
  }

  /** `passLeftMs`: what is left of the pass's budget (PassBudget), when smaller than budgetMs. */
  async runOnce(passLeftMs = Number.POSITIVE_INFINITY): Promise<{ orphansExpired: number; pruned: number }> {
    const orphansExpired = await this.#expireOrphans();
    const { batchSize, maxBatches, budgetMs } = this.options;
    const statements = {
      lock: sqlLockExpired(this.#tables),
      delete: sqlDelete(this.#tables),
      keyOf: (k: Record<string, unknown>) => [k.queue, k.idempotency_key],
    };
    // Retention 0: a key goes as soon as its own expires_at passed.
    const run = await pruneInBatches(this.#db, statements, {
      retentionMs: 0,
      batchSize,
      maxBatches,
      budgetMs: Math.min(budgetMs, passLeftMs),
      jitterMs: TASK_DEFAULTS.jitterMs,
    });
    this.#behind = run.behind;
    return { orphansExpired, pruned: run.deleted };
  }

  /** Starts the retention of one page of live keys whose job is gone, and moves the cursor on; returns how many. */
  async #expireOrphans(): Promise<number> {
    const { batchSize, retentionMs } = this.options;
    const live = (await this.#db.select<{ job_id: number }>(sqlLiveKeys(this.#tables), [this.#cursor, batchSize])).map(
      (r) => Number(r.job_id),
    );
    let orphans: number[] = [];
    if (live.length > 0) {
      const jobs = await this.#db.select<{ id: number }>(sqlLiveJobs(this.#tables), [live]);
      const still = new Set(jobs.map((r) => Number(r.id)));
      orphans = live.filter((id) => !still.has(id));
      await expireIdempotencyKeys(this.#db, this.#tables, orphans, retentionMs);
    }
    this.#cursor = live.length < batchSize ? 0 : (live[live.length - 1] as number);
    return orphans.length;
  }
}
