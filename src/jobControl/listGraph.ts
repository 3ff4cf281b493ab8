import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';
import { type GraphEdge, readGraphEdges } from '../workflows/readGraphEdges.ts';
import { type JobPage, type JobSummary, listJobs } from './listJobs.ts';

/** Most edges read for one page, on each side (into the page's jobs, out of them). */
const EDGES_MAX = 5_000;

/** A live job of a graph, with its dependencies. */
export interface GraphJob extends JobSummary {
  /** Its parents: live ones 'pending', finished ones with how they ended. */
  readonly parents: readonly { readonly id: number; readonly outcome: GraphEdge['parentOutcome'] }[];
  /** Its live children. */
  readonly children: readonly number[];
}

export interface GraphPage {
  readonly jobs: GraphJob[];
  /** Pass as `after` for the next page; null when the listing is complete. */
  readonly next: string | null;
  /** False when a job of the page had more edges than one page reads (EDGES_MAX a side). */
  readonly edgesComplete: boolean;
}

/**
 * One page of a batch's graph as it stands: its live jobs (jobs.list with the batch, keyset
 * pages) with their parents and children, from job_edges in one more statement. A finished job
 * leaves the graph with its own edges; its live children still name it, with how it ended.
 */
export async function listGraph(db: Executor, tables: Tables, batchId: number, page: JobPage = {}): Promise<GraphPage> {
  integerIn('batchId', batchId, 1);
  const list = await listJobs(db, tables, { batchId }, page);
  const { edges, complete } = await readGraphEdges(
    db,
    tables,
    list.jobs.map((j) => j.id),
    EDGES_MAX,
  );
  const parents = new Map<number, GraphJob['parents'][number][]>();
  const children = new Map<number, number[]>();
  const append = <T>(map: Map<number, T[]>, key: number, value: T) => {
    const list = map.get(key);
    if (list) list.push(value);
    else map.set(key, [value]);
  };
  for (const e of edges) {
    append(parents, e.childId, { id: e.parentId, outcome: e.parentOutcome });
    append(children, e.parentId, e.childId);
  }
  return {
    jobs: list.jobs.map((j) => ({ ...j, parents: parents.get(j.id) ?? [], children: children.get(j.id) ?? [] })),
    next: list.next,
    edgesComplete: complete,
  };
}
