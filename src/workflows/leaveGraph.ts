import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import { type ParentOutcome, type Settled, settleChildren } from './settleChildren.ts';

/**
 * Params: ?1 batch id, ?2 child ids (list, of that batch). Keeps the edges of children leaving
 * the live table, for drawing their finished graph (job_graph_history, with the history's
 * retention). A key met again (a child re-run under its old id) only moves its time.
 */
const sqlKeepEdges = (t: Tables) => `
INSERT INTO ${t.jobGraphHistory} (child_id, parent_id, batch_id, continue_on_failure, finished_at)
SELECT child_id, parent_id, ?, continue_on_failure, NOW(3)
FROM ${t.jobEdges}
WHERE child_id IN (?)
ON DUPLICATE KEY UPDATE finished_at = NOW(3)`;

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
  readonly batch_id: number | string | null;
}

/**
 * What a job of a workflow does as it leaves the live table, inside the transaction that removes
 * it: as a parent, it settles its children (released, counted down, or doomed when it failed); as
 * a child, its own edges and any hold it still had go — kept in job_graph_history first when `keep`
 * (history is kept) and it belongs to a batch, one statement per batch. Jobs with flags 0 cost
 * nothing: no statement.
 */
export async function leaveGraph(
  tx: Executor,
  tables: Tables,
  jobs: readonly LeavingJob[],
  outcome: ParentOutcome,
  keep: boolean,
): Promise<Settled> {
  const parents = jobs.filter((j) => (j.flags & JOB_FLAGS.hasDependents) !== 0).map((j) => j.id);
  const leavingChildren = jobs.filter((j) => (j.flags & JOB_FLAGS.hasParents) !== 0);
  const children = leavingChildren.map((j) => j.id);
  if (children.length > 0) {
    if (keep)
      for (const [batchId, ids] of byBatch(leavingChildren)) await tx.write(sqlKeepEdges(tables), [batchId, ids]);
    await tx.write(sqlDropParentEdges(tables), [children]);
    if (outcome !== 'completed') await tx.write(sqlDropHolds(tables), [children]);
  }
  return settleChildren(tx, tables, parents, outcome);
}

/** The jobs of each batch among `jobs` (those of none left out). */
function byBatch(jobs: readonly LeavingJob[]): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const j of jobs) {
    if (j.batch_id === null) continue;
    const ids = out.get(Number(j.batch_id)) ?? [];
    ids.push(j.id);
    out.set(Number(j.batch_id), ids);
  }
  return out;
}
