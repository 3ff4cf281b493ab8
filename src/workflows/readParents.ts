import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { ParentResult } from '../model/job.ts';

/**
 * Params: ?1 child id. Returns the child's parents (KEY ix_child of job_edges: at most MAX_PARENTS
 * rows), each with how it ended, and its result from job_history (the primary key) when history
 * keeps it. A running child's parents have all finished, except those it runs without
 * (continueOnFailure), which are dead or cancelled.
 */
const sqlParents = (t: Tables) => `
SELECT e.parent_id, e.parent_outcome, h.result
FROM ${t.jobEdges} e
LEFT JOIN ${t.jobHistory} h ON h.job_id = e.parent_id
WHERE e.child_id = ?
ORDER BY e.parent_id`;

/** A job's parents and what they returned, for `ctx.parents()`: an empty list for a job outside any workflow. */
export async function readParents(db: Executor, tables: Tables, childId: number): Promise<ParentResult[]> {
  const rows = await db.select<{ parent_id: number | string; parent_outcome: string | null; result: string | null }>(
    sqlParents(tables),
    [childId],
  );
  return rows.map((r) => ({
    id: Number(r.parent_id),
    outcome: (r.parent_outcome ?? 'completed') as ParentResult['outcome'],
    result: r.result === null ? undefined : (JSON.parse(r.result) as unknown),
  }));
}
