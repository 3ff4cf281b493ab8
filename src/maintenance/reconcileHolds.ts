import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { type CancelOptions, cancelDependents } from '../jobControl/cancelJobs.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import { type ParentOutcome, releaseWaitingForNobody, settleChildren } from '../workflows/settleChildren.ts';

/** Params: ?1 after job id, ?2 limit. One page of held jobs (job_holds' primary key), in id order. */
const sqlHolds = (t: Tables) => `
SELECT job_id
FROM ${t.jobHolds}
WHERE job_id > ?
  AND reason = 'parents'
ORDER BY job_id
LIMIT ?`;

/**
 * Params: ?1 child ids (list), ?2 limit. The pending edges of those children whose parent left the
 * live table without settling them (removed around sluice, or dead-lettered by an earlier sluice's
 * maintenance process), each with where the parent went: dead_jobs (its primary key), else its history outcome
 * (primary key), else nothing known. KEY ix_child, then one primary-key probe per table and edge.
 */
const sqlOrphanEdges = (t: Tables) => `
SELECT DISTINCT e.parent_id, d.id IS NOT NULL AS dead, h.outcome
FROM ${t.jobEdges} e
LEFT JOIN ${t.jobs} p ON p.id = e.parent_id
LEFT JOIN ${t.deadJobs} d ON d.id = e.parent_id
LEFT JOIN ${t.jobHistory} h ON h.job_id = e.parent_id
WHERE e.child_id IN (?)
  AND e.parent_outcome IS NULL
  AND p.id IS NULL
LIMIT ?`;

/** Params: ?1 child ids (list). Those of the held children with no pending edge left: nothing to wait for. */
const sqlWaitingForNobody = (t: Tables) => `
SELECT h.job_id
FROM ${t.jobHolds} h
WHERE h.job_id IN (?)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.child_id = h.job_id AND e.parent_outcome IS NULL)`;

/** reconcileHolds' options. Every field is optional. */
export interface ReconcileHoldsOptions {
  /** Held jobs read per page, and orphaned edges settled per page. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most pages per pass; the next pass goes on from where this one stopped. @defaultValue 200 */
  readonly maxBatches?: number;
  /** How a dependent cancelled here is kept (as a cancel keeps it). @defaultValue no history */
  readonly cancel?: CancelOptions;
  /** Told of the queues of children released (the maintenance process rings their workers). @defaultValue none */
  readonly onReleased?: ((queues: ReadonlyMap<string, number>) => void) | null;
}

export type ResolvedReconcileHoldsOptions = Readonly<Required<ReconcileHoldsOptions>>;

function resolveReconcileHoldsOptions(options: ReconcileHoldsOptions): ResolvedReconcileHoldsOptions {
  const r = {
    batchSize: TASK_DEFAULTS.batchSize,
    maxBatches: TASK_DEFAULTS.maxBatches,
    cancel: { history: false, keyRetentionMs: 0 },
    onReleased: null,
    ...defined(options),
  };
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxBatches', r.maxBatches, 1, 1_000);
  return r;
}

/**
 * The backstop of workflows: completion, dead-lettering and cancel settle a parent's children in
 * their own transactions, but a parent can also leave the live table another way (a row deleted by
 * hand; dead-lettered by an earlier sluice's maintenance process, which left its children here).
 * Each pass walks held jobs in bounded pages (resuming where the last pass stopped) and, for each
 * page: settles every pending edge whose parent is gone (dead → dead; its history outcome; nothing
 * known → lost, never completed: a parent that left no trace may have failed), which releases or
 * cancels children as a worker would;
 * then releases any held child left with no pending edge at all. Counts: parents settled,
 * children released, dependents cancelled.
 */
export function reconcileHolds(
  taskDb: TaskDb,
  options: ReconcileHoldsOptions = {},
): MaintenanceTask<'reconcileHolds', 'settled' | 'released' | 'cancelled', ResolvedReconcileHoldsOptions> {
  return new HoldReconciler(taskDb, options);
}

class HoldReconciler
  implements MaintenanceTask<'reconcileHolds', 'settled' | 'released' | 'cancelled', ResolvedReconcileHoldsOptions>
{
  readonly name = 'reconcileHolds';
  readonly options: ResolvedReconcileHoldsOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  /** Where the walk of job_holds goes on from at the next pass. */
  #afterId = 0;

  constructor({ db, tables }: TaskDb, options: ReconcileHoldsOptions) {
    this.options = resolveReconcileHoldsOptions(options);
    this.#db = db;
    this.#tables = tables;
  }

  async runOnce(): Promise<{ settled: number; released: number; cancelled: number }> {
    const counts = { settled: 0, released: 0, cancelled: 0 };
    const { batchSize, maxBatches } = this.options;
    for (let batch = 0; batch < maxBatches; batch++) {
      const page = await this.#db.select<{ job_id: number | string }>(sqlHolds(this.#tables), [
        this.#afterId,
        batchSize,
      ]);
      const ids = page.map((r) => Number(r.job_id));
      if (ids.length > 0) await this.#reconcile(ids, counts);
      if (ids.length < batchSize) {
        this.#afterId = 0;
        break;
      }
      this.#afterId = ids[ids.length - 1] as number;
    }
    return counts;
  }

  /** One page of held children, in one short transaction (re-run whole after a transient conflict). */
  async #reconcile(ids: number[], counts: { settled: number; released: number; cancelled: number }): Promise<void> {
    const released = new Map<string, number>();
    const done = await withTransaction(this.#db, async (tx) => {
      const page = { settled: 0, released: 0, cancelled: 0 };
      released.clear();
      const orphans = await tx.select<{ parent_id: number | string; dead: number; outcome: string | null }>(
        sqlOrphanEdges(this.#tables),
        [ids, this.options.batchSize],
      );
      for (const orphan of orphans) {
        const outcome = orphanOutcome(Number(orphan.dead) === 1, orphan.outcome);
        const settled = await settleChildren(tx, this.#tables, [Number(orphan.parent_id)], outcome);
        page.settled++;
        for (const [queue, n] of settled.released) released.set(queue, (released.get(queue) ?? 0) + n);
        page.cancelled += (
          await cancelDependents(tx, this.#tables, settled.doomed, { ...this.options.cancel, released })
        ).length;
      }
      const nobody = await tx.select<{ job_id: number | string }>(sqlWaitingForNobody(this.#tables), [ids]);
      const freed = await releaseWaitingForNobody(
        tx,
        this.#tables,
        nobody.map((r) => Number(r.job_id)),
      );
      for (const [queue, n] of freed) released.set(queue, (released.get(queue) ?? 0) + n);
      for (const n of released.values()) page.released += n;
      return page;
    });
    counts.settled += done.settled;
    counts.released += done.released;
    counts.cancelled += done.cancelled;
    if (released.size > 0) this.options.onReleased?.(released);
  }
}

/**
 * Where a parent that left without settling its children went: a dead row says dead, a history row
 * its outcome; anything else (no row, or a value sluice never writes) is lost — never completed.
 */
function orphanOutcome(dead: boolean, historyOutcome: string | null): ParentOutcome {
  if (dead) return 'dead';
  if (historyOutcome === 'completed' || historyOutcome === 'cancelled') return historyOutcome;
  return 'lost';
}
