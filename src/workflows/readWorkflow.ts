import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { readOutcomes } from './readFinishedGraph.ts';

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

/**
 * Params: ?1 job id, ?2 limit, ?3 job id, ?4 limit. The edges kept of the job's finished parents'
 * children and its own (job_graph_history: its parents by the primary key, its finished children
 * by ix_parent), each bounded, in one statement.
 */
const sqlKept = (t: Tables) => `
(SELECT 'parent' AS side, parent_id AS id, continue_on_failure
 FROM ${t.jobGraphHistory}
 WHERE child_id = ?
 ORDER BY parent_id
 LIMIT ?)
UNION ALL
(SELECT 'child', child_id, continue_on_failure
 FROM ${t.jobGraphHistory}
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
  /**
   * Its parents: each with how it ended, or 'pending' while it is live itself. A finished job's
   * come from the edges kept with the history, 'finished' where neither the history nor the dead
   * jobs hold that parent any more (or, for a child cancelled early, it still runs).
   */
  readonly parents: readonly {
    readonly id: number;
    readonly outcome: 'pending' | 'completed' | 'dead' | 'cancelled' | 'lost' | 'finished';
    readonly continueOnFailure: boolean;
  }[];
  /**
   * Its children: the live ones (`outcome` absent), and those that finished, with how they ended,
   * as long as the history keeps their edges.
   */
  readonly children: readonly {
    readonly id: number;
    readonly continueOnFailure: boolean;
    readonly outcome?: 'completed' | 'dead' | 'cancelled' | 'finished';
  }[];
  /** Held back: why, how many parents it still waits for, and the run_at it gets back once released. */
  readonly held: { readonly reason: string; readonly waitingFor: number; readonly runAt: Date } | null;
}

/**
 * The job's parents, children and hold; null for a job outside any workflow. Indexed reads: the
 * live edges, the kept ones, how the finished jobs they name ended (when any), the hold (when held).
 */
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
  const children: JobWorkflow['children'][number][] = edges
    .filter((e) => e.side === 'child')
    .map((e) => ({ id: Number(e.id), continueOnFailure: Number(e.continue_on_failure) === 1 }));
  // Only a job with live edges to its parents can be held.
  const holdable = parents.length > 0;
  const kept = await db.select<{ side: 'parent' | 'child'; id: number | string; continue_on_failure: number }>(
    sqlKept(tables),
    [id, WORKFLOW_LIST_LIMIT, id, WORKFLOW_LIST_LIMIT],
  );
  // Disjoint from the live edges: a child's edges are kept only once it has left the live table.
  const outcomes = await readOutcomes(
    db,
    tables,
    kept.map((e) => Number(e.id)),
  );
  for (const e of kept) {
    const entry = { id: Number(e.id), continueOnFailure: Number(e.continue_on_failure) === 1 };
    const outcome = outcomes.get(entry.id) ?? 'finished';
    if (e.side === 'parent') parents.push({ ...entry, outcome });
    else children.push({ ...entry, outcome });
  }
  const [hold] = holdable
    ? await db.select<{ reason: string; run_at: Date; waiting_parents: number }>(sqlHold(tables), [id])
    : [];
  if (parents.length === 0 && children.length === 0 && hold === undefined) return null;
  return {
    parents,
    children,
    held: hold ? { reason: hold.reason, waitingFor: Number(hold.waiting_parents), runAt: hold.run_at } : null,
  };
}
