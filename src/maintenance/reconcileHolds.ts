import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { OptionsError } from '../errors.ts';
import { type CancelOptions, cancelDependents, cancelLeftOver, cascadeBudget } from '../jobControl/cancelJobs.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import {
  doomReason,
  type ParentOutcome,
  releaseWaitingForNobody,
  settleChildren,
} from '../workflows/settleChildren.ts';
import { StepBudget } from './StepBudget.ts';
import { type MonotonicClock, monotonicClock } from './UnchangedSince.ts';

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
 * maintenance process), each with where the parent went: dead_jobs (its primary key), else its
 * history outcome (primary key), else nothing known. KEY ix_child, then one primary-key probe per
 * table and edge.
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

/** An edge (alias `e`) whose parent failed and whose child does not continue on failure: the child is doomed. */
const failedEdge = (e: string) =>
  `${e}.continue_on_failure = 0 AND ${e}.parent_outcome IN ('dead', 'cancelled', 'lost')`;

/**
 * Params: ?1 child ids (list). The held children among them that a failed parent dooms, one row
 * each, with its first such parent and how that parent ended: what a bounded cascade left for
 * later (cancelJobs' CascadeBudget). KEY ix_child; at most one row per child.
 */
const sqlDoomed = (t: Tables) => `
SELECT e.child_id, e.parent_id, e.parent_outcome
FROM ${t.jobEdges} e
WHERE e.child_id IN (?)
  AND ${failedEdge('e')}
  AND e.parent_id = (SELECT MIN(f.parent_id) FROM ${t.jobEdges} f WHERE f.child_id = e.child_id AND ${failedEdge('f')})`;

/**
 * Params: ?1 child ids (list). Those of the held children with no pending edge left and none that
 * dooms them: nothing to wait for.
 */
const sqlWaitingForNobody = (t: Tables) => `
SELECT h.job_id
FROM ${t.jobHolds} h
WHERE h.job_id IN (?)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.child_id = h.job_id AND e.parent_outcome IS NULL)
  AND NOT EXISTS (SELECT 1 FROM ${t.jobEdges} e WHERE e.child_id = h.job_id AND ${failedEdge('e')})`;

/** reconcileHolds' options. Every field is optional. */
export interface ReconcileHoldsOptions {
  /** Held jobs read per page, and orphaned edges settled per page. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most pages per pass; the next pass goes on from where this one stopped. @defaultValue 200 */
  readonly maxBatches?: number;
  /**
   * How long one pass keeps reading pages (it always finishes the page it began, and reads at
   * least one); the next pass goes on from where this one stopped. @defaultValue 1,000
   */
  readonly budgetMs?: number;
  /** The clock the budget is measured on (monotonic, ms). @defaultValue performance.now */
  readonly clock?: MonotonicClock;
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
    budgetMs: 1_000,
    clock: monotonicClock,
    cancel: { history: false, keyRetentionMs: 0 },
    onReleased: null,
    ...defined(options),
  };
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxBatches', r.maxBatches, 1, 1_000);
  integerIn('budgetMs', r.budgetMs, 1, 600_000);
  if (typeof r.clock !== 'function') throw new OptionsError('clock', 'must be a function returning milliseconds');
  return r;
}

/**
 * The backstop of workflows: completion, dead-lettering and cancel settle a parent's children in
 * their own transactions, but a parent can also leave the live table another way (a row deleted by
 * hand; dead-lettered by an earlier sluice's maintenance process, which left its children here).
 * Each pass walks held jobs in bounded pages (resuming where the last pass stopped) and, for each
 * page: settles every pending edge whose parent is gone (dead → dead; its history outcome; nothing
 * known → lost, never completed: a parent that left no trace may have failed), which releases or
 * cancels children as a worker would; then cancels each held child a failed parent dooms (what a
 * bounded cascade left: cancelJobs' CascadeBudget), going on with what those cascades leave in up
 * to `maxBatches` follow-up transactions a pass, each as bounded; then releases any held child
 * left with no pending edge and none that dooms it. A pass stops after `maxBatches` pages or
 * `budgetMs`, whichever comes first (it always reads one page), and the next pass goes on after the
 * last held job it read; after the last held job the walk starts again from the first. So a held
 * job is reached within ceil(held jobs ÷ batchSize) + 1 passes, and within one pass while a pass
 * covers them all (100,000 held jobs are 200 pages: one pass at the defaults if the budget allows).
 * Counts: parents settled, children released, dependents cancelled.
 */
export function reconcileHolds(
  taskDb: TaskDb,
  options: ReconcileHoldsOptions = {},
): MaintenanceTask<'reconcileHolds', keyof Counts, ResolvedReconcileHoldsOptions> {
  return new HoldReconciler(taskDb, options);
}

class HoldReconciler implements MaintenanceTask<'reconcileHolds', keyof Counts, ResolvedReconcileHoldsOptions> {
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

  /** `passLeftMs`: what is left of the pass's budget (PassBudget), when smaller than budgetMs. */
  async runOnce(passLeftMs = Number.POSITIVE_INFINITY): Promise<Counts> {
    const counts = { settled: 0, released: 0, cancelled: 0 };
    const { batchSize, maxBatches, budgetMs, clock } = this.options;
    const budget = new StepBudget(clock, Math.min(budgetMs, passLeftMs));
    // Follow-up transactions of cascades left over, this pass: as many as it reads pages, at most.
    let followUps = maxBatches;
    for (let batch = 0; batch < maxBatches; batch++) {
      const page = await this.#db.select<{ job_id: number | string }>(sqlHolds(this.#tables), [
        this.#afterId,
        batchSize,
      ]);
      const ids = page.map((r) => Number(r.job_id));
      if (ids.length > 0) followUps -= await this.#reconcile(ids, counts, followUps);
      if (ids.length < batchSize) {
        this.#afterId = 0;
        break;
      }
      this.#afterId = ids[ids.length - 1] as number;
      if (budget.stepped()) break;
    }
    return counts;
  }

  /**
   * One page of held children, in one short transaction (re-run whole after a transient conflict);
   * then what its cascades left, in up to `followUps` more. Returns the follow-ups it ran.
   */
  async #reconcile(ids: number[], counts: Counts, followUps: number): Promise<number> {
    const released = new Map<string, number>();
    const cancel = { ...this.options.cancel, released };
    const done = await withTransaction(this.#db, async (tx) => {
      const page = { settled: 0, cancelled: 0 };
      const budget = cascadeBudget();
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
        page.cancelled += (await cancelDependents(tx, this.#tables, settled.doomed, cancel, budget)).length;
      }
      const doomed = await tx.select<{ child_id: number | string; parent_id: number | string; parent_outcome: string }>(
        sqlDoomed(this.#tables),
        [ids],
      );
      const reasons = new Map(
        doomed.map((d) => [Number(d.child_id), doomReason(Number(d.parent_id), d.parent_outcome as ParentOutcome)]),
      );
      page.cancelled += (await cancelDependents(tx, this.#tables, reasons, cancel, budget)).length;
      const nobody = await tx.select<{ job_id: number | string }>(sqlWaitingForNobody(this.#tables), [ids]);
      const freed = await releaseWaitingForNobody(
        tx,
        this.#tables,
        nobody.map((r) => Number(r.job_id)),
      );
      for (const [queue, n] of freed) released.set(queue, (released.get(queue) ?? 0) + n);
      return { page, left: budget.left };
    });
    const more = await cancelLeftOver(this.#db, this.#tables, done.left, cancel, followUps);
    counts.settled += done.page.settled;
    counts.cancelled += done.page.cancelled + more.cancelled.length;
    for (const n of released.values()) counts.released += n;
    if (released.size > 0) this.options.onReleased?.(released);
    return more.transactions;
  }
}

type Counts = { settled: number; released: number; cancelled: number };

/**
 * Where a parent that left without settling its children went: a dead row says dead, a history row
 * its outcome; anything else (no row, or a value sluice never writes) is lost — never completed.
 */
function orphanOutcome(dead: boolean, historyOutcome: string | null): ParentOutcome {
  if (dead) return 'dead';
  if (historyOutcome === 'completed' || historyOutcome === 'cancelled') return historyOutcome;
  return 'lost';
}
