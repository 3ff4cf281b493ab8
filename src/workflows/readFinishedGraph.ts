import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';

/**
 * Params: ?1 batch id, ?2 limit. The kept edges of a batch's finished children, in child order
 * (ix_batch), at most `limit`.
 */
const sqlEdges = (t: Tables) => `
SELECT child_id, parent_id
FROM ${t.jobGraphHistory}
WHERE batch_id = ?
ORDER BY batch_id, child_id, parent_id
LIMIT ?`;

/**
 * Params: ?1 ids (list), ?2 ids (list). How each of the jobs ended, by primary key: the history's
 * outcome (completed or cancelled), or dead.
 */
const sqlOutcomes = (t: Tables) => `
SELECT job_id AS id, outcome
FROM ${t.jobHistory}
WHERE job_id IN (?)
UNION ALL
SELECT id, 'dead'
FROM ${t.deadJobs}
WHERE id IN (?)`;

/** The finished part of a batch's graph, as far as its history keeps it. */
export interface FinishedGraph {
  /** Dependencies whose child finished (the live ones are in batches.graph), in child order. */
  readonly edges: { readonly parentId: number; readonly childId: number }[];
  /**
   * How each job these edges name ended, when the history or the dead jobs still hold it
   * (completed, cancelled or dead); a job still live, or pruned, is not in it.
   */
  readonly outcomes: ReadonlyMap<number, 'completed' | 'cancelled' | 'dead'>;
  /** False when the batch has more finished edges than `limit`: a part of them. */
  readonly complete: boolean;
}

/**
 * The finished part of a batch's graph in at most two statements: its kept edges (at most
 * `limit`, one more read to know whether there are more) and how the jobs they name ended, by
 * primary key. Kept only while history is (historyRetentionMs > 0), for as long as it is.
 */
export async function readFinishedGraph(
  db: Executor,
  tables: Tables,
  batchId: number,
  options: { limit?: number } = {},
): Promise<FinishedGraph> {
  integerIn('batchId', batchId, 1);
  const limit = integerIn('limit', options.limit ?? 200, 1, 5_000);
  const rows = await db.select<{ child_id: number | string; parent_id: number | string }>(sqlEdges(tables), [
    batchId,
    limit + 1,
  ]);
  const edges = rows.slice(0, limit).map((r) => ({ parentId: Number(r.parent_id), childId: Number(r.child_id) }));
  const outcomes = await readOutcomes(db, tables, [...new Set(edges.flatMap((e) => [e.parentId, e.childId]))]);
  return { edges, outcomes, complete: rows.length <= limit };
}

/** How each of some finished jobs ended, by primary key, in one statement (none for no ids): those the history or the dead jobs still hold. */
export async function readOutcomes(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
): Promise<Map<number, 'completed' | 'cancelled' | 'dead'>> {
  const outcomes = new Map<number, 'completed' | 'cancelled' | 'dead'>();
  if (ids.length === 0) return outcomes;
  for (const r of await db.select<{ id: number | string; outcome: 'completed' | 'cancelled' | 'dead' }>(
    sqlOutcomes(tables),
    [ids, ids],
  ))
    outcomes.set(Number(r.id), r.outcome);
  return outcomes;
}
