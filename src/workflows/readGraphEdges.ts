import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 job ids (list), ?2 limit, ?3 job ids (list), ?4 limit. The edges into the jobs (KEY
 * ix_child) and out of them (the PRIMARY KEY's parent_id prefix), each half bounded: an edge
 * between two of the jobs comes twice. Returns side ('in' or 'out'), parent_id, child_id, parent_outcome (NULL while the
 * parent is live).
 */
const sqlEdges = (t: Tables) => `
(SELECT 'in' AS side, parent_id, child_id, parent_outcome
 FROM ${t.jobEdges}
 WHERE child_id IN (?)
 ORDER BY child_id, parent_id
 LIMIT ?)
UNION ALL
(SELECT 'out', parent_id, child_id, parent_outcome
 FROM ${t.jobEdges}
 WHERE parent_id IN (?)
 ORDER BY parent_id, child_id
 LIMIT ?)`;

/** One dependency: the child runs once its parent finished. */
export interface GraphEdge {
  readonly parentId: number;
  readonly childId: number;
  /** How the parent ended, or 'pending' while it is live. */
  readonly parentOutcome: 'pending' | 'completed' | 'dead' | 'cancelled' | 'lost';
}

/**
 * The edges that touch some jobs, as job_edges holds them: an edge lives while its child is live (a
 * finished child's edges are gone, so a finished part of a graph has none). One statement, at
 * most `max` rows a side; `complete` is false when a side filled it.
 */
export async function readGraphEdges(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  max: number,
): Promise<{ edges: GraphEdge[]; complete: boolean }> {
  if (ids.length === 0) return { edges: [], complete: true };
  const rows = await db.select<{
    side: 'in' | 'out';
    parent_id: number | string;
    child_id: number | string;
    parent_outcome: string | null;
  }>(sqlEdges(tables), [ids, max, ids, max]);
  const into = rows.filter((r) => r.side === 'in').length;
  const seen = new Set<string>();
  const edges: GraphEdge[] = [];
  for (const r of rows) {
    const parentId = Number(r.parent_id);
    const childId = Number(r.child_id);
    const key = `${parentId}>${childId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push({ parentId, childId, parentOutcome: (r.parent_outcome ?? 'pending') as GraphEdge['parentOutcome'] });
  }
  return { edges, complete: into < max && rows.length - into < max };
}
