import { JobValidationError } from '../errors.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import type { GraphRows } from '../workflows/writeGraph.ts';

/** One dependency of a batch's graph: a parent (a job of the batch, by index, or a live job, by id) and a child. */
export interface PlannedEdge {
  readonly parentIndex: number | null;
  readonly parentId: number | null;
  readonly childIndex: number;
  readonly continueOnFailure: boolean;
}

/** A batch's graph, checked: what the writer adds to each row and writes after the jobs. */
export interface GraphPlan {
  /** jobs.flags per job index (absent: 0). */
  readonly flags: ReadonlyMap<number, number>;
  readonly edges: readonly PlannedEdge[];
  /** Live jobs named as parents by id, each with the index of the first job naming it (for the error). */
  readonly externalParents: ReadonlyMap<number, number>;
}

/**
 * Pure: resolves every job's parents (a ref of this batch or a job id) and checks the graph before
 * anything is written: a ref defined twice, a parent named twice by one job, an unknown ref, a job
 * that is its own ancestor (a cycle, found by Kahn's algorithm over the batch's edges: ids of live
 * jobs cannot close a cycle, since a live job cannot depend on one not yet written), and a parent
 * by ref that carries an idempotency key (skipped as a duplicate, it would leave its children
 * waiting for a job that was never written) each throw one JobValidationError naming the job's index
 * and the reference. Returns null for a batch with no graph: it is written as before.
 */
export function planGraph(jobs: readonly NormalizedJob[]): GraphPlan | null {
  if (!jobs.some((job) => job.graph !== null)) return null;
  const refs = new Map<string, number>();
  jobs.forEach((job, index) => {
    const ref = job.graph?.ref ?? null;
    if (ref === null) return;
    if (refs.has(ref)) throw new JobValidationError(index, 'ref', `repeats "${ref}", the ref of job ${refs.get(ref)}`);
    refs.set(ref, index);
  });
  const flags = new Map<number, number>();
  const edges: PlannedEdge[] = [];
  const externalParents = new Map<number, number>();
  const mark = (index: number, bit: number) => flags.set(index, (flags.get(index) ?? 0) | bit);
  jobs.forEach((job, childIndex) => {
    const seen = new Set<string | number>();
    job.graph?.parents.forEach(({ job: parent, continueOnFailure }, i) => {
      const field = `parents[${i}]`;
      if (seen.has(parent)) throw new JobValidationError(childIndex, field, `names ${show(parent)} twice`);
      seen.add(parent);
      if (typeof parent === 'number') {
        if (!externalParents.has(parent)) externalParents.set(parent, childIndex);
        edges.push({ parentIndex: null, parentId: parent, childIndex, continueOnFailure });
      } else {
        const parentIndex = refs.get(parent);
        if (parentIndex === undefined) throw new JobValidationError(childIndex, field, `names unknown ref "${parent}"`);
        if (jobs[parentIndex]?.idempotencyKey != null) {
          throw new JobValidationError(
            childIndex,
            field,
            `names "${parent}", which carries an idempotencyKey: a parent in a batch cannot (skipped as a duplicate, it would hold its children forever)`,
          );
        }
        mark(parentIndex, JOB_FLAGS.hasDependents);
        edges.push({ parentIndex, parentId: null, childIndex, continueOnFailure });
      }
      mark(childIndex, JOB_FLAGS.hasParents);
    });
  });
  checkAcyclic(jobs, refs, edges);
  return { flags, edges, externalParents };
}

/** Throws for the first job left on a cycle once every job reachable from a root is taken (Kahn). */
function checkAcyclic(
  jobs: readonly NormalizedJob[],
  refs: ReadonlyMap<string, number>,
  edges: readonly PlannedEdge[],
): void {
  const pending = new Map<number, number>();
  const children = new Map<number, number[]>();
  for (const edge of edges) {
    if (edge.parentIndex === null) continue;
    pending.set(edge.childIndex, (pending.get(edge.childIndex) ?? 0) + 1);
    const list = children.get(edge.parentIndex);
    if (list) list.push(edge.childIndex);
    else children.set(edge.parentIndex, [edge.childIndex]);
  }
  const ready = [...children.keys()].filter((index) => !pending.has(index));
  while (ready.length > 0) {
    const index = ready.pop() as number;
    for (const child of children.get(index) ?? []) {
      const left = (pending.get(child) ?? 1) - 1;
      if (left === 0) {
        pending.delete(child);
        ready.push(child);
      } else pending.set(child, left);
    }
  }
  const first = pending.keys().next();
  if (first.done) return;
  // Every job left waits on another one left: walking up parents must come back to a job seen, on the cycle.
  const pendingParent = (index: number) => {
    const parents = jobs[index]?.graph?.parents ?? [];
    const i = parents.findIndex((p) => typeof p.job === 'string' && pending.has(refs.get(p.job) ?? -1));
    return { i, ref: String(parents[i]?.job), parent: refs.get(String(parents[i]?.job)) as number };
  };
  const seen = new Set<number>();
  let index = first.value;
  while (!seen.has(index)) {
    seen.add(index);
    index = pendingParent(index).parent;
  }
  const { i, ref } = pendingParent(index);
  throw new JobValidationError(
    index,
    `parents[${i}]`,
    `names "${ref}", which depends on this job in turn: a workflow cannot have a cycle`,
  );
}

function show(parent: string | number): string {
  return typeof parent === 'number' ? `job ${parent}` : `"${parent}"`;
}

/**
 * Pure: a written batch's edges and its children's hold rows, from the plan and the id each job of
 * the graph got (`ids`, by index) — a child skipped as a duplicate gets no edge and no hold.
 */
export function graphRowsOf(
  graph: GraphPlan,
  ids: ReadonlyMap<number, number>,
  jobs: ReadonlyMap<number, NormalizedJob>,
): GraphRows {
  const edges: [number, number, boolean][] = [];
  const waiting = new Map<number, number>();
  for (const edge of graph.edges) {
    const child = ids.get(edge.childIndex);
    if (child === undefined) continue;
    const parent = edge.parentId ?? (ids.get(edge.parentIndex as number) as number);
    edges.push([parent, child, edge.continueOnFailure]);
    waiting.set(edge.childIndex, (waiting.get(edge.childIndex) ?? 0) + 1);
  }
  const holds = [...waiting].map(([index, count]) => ({
    id: ids.get(index) as number,
    job: jobs.get(index) as NormalizedJob,
    waiting: count,
  }));
  return { edges, holds };
}
