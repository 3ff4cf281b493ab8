/**
 * The graphs bench graph enqueues (workflowGraph.ts), by `--shape`, each of `groups` × `width`
 * leaves, every job on `queue`:
 *   - 'fanin': per group, `width` leaves and a fan-in after all of them; a final job after every
 *     fan-in. The leaves are due at once: only the fan-ins and the final job are held.
 *   - 'held': the same behind one root job per group: the leaves are held too, all but the roots.
 *   - 'random': groups × (width + 1) + 1 jobs, each after 0–3 distinct jobs drawn from the 1,000
 *     before it (from a fixed seed: the same graph every run), about 1.5 parents a job.
 */
import type { JobSpec } from 'sluice';

export type GraphShape = 'fanin' | 'held' | 'random';
export const GRAPH_SHAPES: readonly GraphShape[] = ['fanin', 'held', 'random'];

export interface GraphSize {
  readonly groups: number;
  readonly width: number;
  /** The fan-ins' and the final job's priority. */
  readonly faninPriority: number;
}

/** The jobs of one graph of `shape`, parents before children. */
export function graphJobs(shape: GraphShape, queue: string, size: GraphSize): JobSpec[] {
  if (shape === 'random') return randomDag(queue, size.groups * (size.width + 1) + 1);
  const { groups, width, faninPriority } = size;
  const jobs: JobSpec[] = [];
  for (let g = 0; g < groups; g++) {
    const root = `r${g}`;
    if (shape === 'held') jobs.push({ name: 'leaf', queue, ref: root, payload: { g } });
    const leaves = Array.from({ length: width }, (_, i) => `l${g}.${i}`);
    for (const ref of leaves)
      jobs.push({ name: 'leaf', queue, ref, payload: { g }, ...(shape === 'held' ? { parents: [root] } : {}) });
    jobs.push({ name: 'fanIn', queue, ref: `f${g}`, parents: leaves, payload: { g }, priority: faninPriority });
  }
  const fanIns = Array.from({ length: groups }, (_, g) => `f${g}`);
  jobs.push({ name: 'final', queue, parents: fanIns, payload: {}, priority: faninPriority });
  return jobs;
}

/** How far back a random DAG's job draws its parents. */
const RANDOM_WINDOW = 1_000;

function randomDag(queue: string, count: number): JobSpec[] {
  const next = mulberry32(43);
  return Array.from({ length: count }, (_, i) => {
    const parents = new Set<string>();
    const wanted = Math.min(i, Math.floor(next() * 4));
    while (parents.size < wanted) parents.add(`j${i - 1 - Math.floor(next() * Math.min(i, RANDOM_WINDOW))}`);
    return {
      name: 'leaf',
      queue,
      ref: `j${i}`,
      payload: { g: i },
      ...(parents.size > 0 ? { parents: [...parents] } : {}),
    };
  });
}

/** Numbers uniform in [0, 1) from a seed: the same sequence on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
