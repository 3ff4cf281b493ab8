import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import { type ParentOutcome, type Settled, settleChildren } from './settleChildren.ts';

/** Params: ?1 child ids (list). A finished child's own edges (KEY ix_child): its parents are nobody's business any more. */
const sqlDropParentEdges = (t: Tables) => `
DELETE FROM ${t.jobEdges}
WHERE child_id IN (?)`;

/** Params: ?1 child ids (list). The hold of a child that finished before its parents did (it was cancelled). */
const sqlDropHolds = (t: Tables) => `
DELETE FROM ${t.jobHolds}
WHERE job_id IN (?)`;

/** A job leaving the live table, with the flags it had there. */
export interface LeavingJob {
  readonly id: number;
  readonly flags: number;
}

/**
 * What a job of a workflow does as it leaves the live table, inside the transaction that removes
 * it: as a parent, it settles its children (released, counted down, or doomed when it failed); as
 * a child, its own edges and any hold it still had go. Jobs with flags 0 cost nothing: no statement.
 */
export async function leaveGraph(
  tx: Executor,
  tables: Tables,
  jobs: readonly LeavingJob[],
  outcome: ParentOutcome,
): Promise<Settled> {
  const parents = jobs.filter((j) => (j.flags & JOB_FLAGS.hasDependents) !== 0).map((j) => j.id);
  const children = jobs.filter((j) => (j.flags & JOB_FLAGS.hasParents) !== 0).map((j) => j.id);
  if (children.length > 0) {
    await tx.write(sqlDropParentEdges(tables), [children]);
    if (outcome !== 'completed') await tx.write(sqlDropHolds(tables), [children]);
  }
  return settleChildren(tx, tables, parents, outcome);
}
