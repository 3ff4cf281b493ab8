import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Parents and children listed per job: a wider fan is counted, not listed. */
export const WORKFLOW_LIST_LIMIT = 1_000;

/**
 * Params: ?1 job id, ?2 limit, ?3 job id, ?4 limit. The job's parents (KEY ix_child) and its
 * children (the PRIMARY KEY's parent_id prefix), each bounded, in one statement.
 */
const sqlEdges = (t: Tables) => `
(SELECT 'parent' AS side, parent_id AS id, parent_outcome AS outcome, continue_on_failure
 FROM ${t.jobEdges}
 WHERE child_id = ?
 ORDER BY parent_id
 LIMIT ?)
UNION ALL
(SELECT 'child', child_id, NULL, continue_on_failure
 FROM ${t.jobEdges}
 WHERE parent_id = ?
 ORDER BY child_id
 LIMIT ?)`;

/** Params: ?1 job id. Why a held job waits and the run_at it gets back (job_holds' primary key). */
const sqlHold = (t: Tables) => `
SELECT reason, run_at, waiting_parents
FROM ${t.jobHolds}
WHERE job_id = ?`;

/** A job's place in a workflow, as jobs.get reports it. */
export interface JobWorkflow {
  /** Its parents while it is live: each with how it ended, or 'pending' while it is live itself. */
  readonly parents: readonly {
    readonly id: number;
    readonly outcome: 'pending' | 'completed' | 'dead' | 'cancelled' | 'lost';
    readonly continueOnFailure: boolean;
  }[];
  /** Its children that are still live (a finished child leaves the graph). */
  readonly children: readonly { readonly id: number; readonly continueOnFailure: boolean }[];
  /** Held back: why, how many parents it still waits for, and the run_at it gets back once released. */
  readonly held: { readonly reason: string; readonly waitingFor: number; readonly runAt: Date } | null;
}

/** The job's parents, children and hold; null for a job outside any workflow. Two indexed reads. */
export async function readWorkflow(db: Executor, tables: Tables, id: number): Promise<JobWorkflow | null> {
  const edges = await db.select<{
    side: 'parent' | 'child';
    id: number | string;
    outcome: string | null;
    continue_on_failure: number;
  }>(sqlEdges(tables), [id, WORKFLOW_LIST_LIMIT, id, WORKFLOW_LIST_LIMIT]);
  const parents = edges
    .filter((e) => e.side === 'parent')
    .map((e) => ({
      id: Number(e.id),
      outcome: (e.outcome ?? 'pending') as JobWorkflow['parents'][number]['outcome'],
      continueOnFailure: Number(e.continue_on_failure) === 1,
    }));
  const children = edges
    .filter((e) => e.side === 'child')
    .map((e) => ({ id: Number(e.id), continueOnFailure: Number(e.continue_on_failure) === 1 }));
  const [hold] =
    parents.length > 0
      ? await db.select<{ reason: string; run_at: Date; waiting_parents: number }>(sqlHold(tables), [id])
      : [];
  if (parents.length === 0 && children.length === 0 && hold === undefined) return null;
  return {
    parents,
    children,
    held: hold ? { reason: hold.reason, waitingFor: Number(hold.waiting_parents), runAt: hold.run_at } : null,
  };
}
