import type { Sluice } from '../Sluice.ts';
import { renderTable } from './renderTable.ts';
import { terminalJson } from './terminalText.ts';
import { UsageError } from './UsageError.ts';

/** Parents and children printed per job: the first this many, then a count. */
const SHOWN = 10;

/**
 * `sluice jobs graph --batch ID | --job ID`: one page of a graph as it stands (sluice.batches.graph:
 * the batch's live jobs, each with its parents and how they ended, and its live children). --job
 * names any job of the graph: its batch is listed.
 */
export async function jobsGraph(
  sluice: Sluice,
  target: { batchId?: number; jobId?: number },
  page: { limit?: number; after?: string },
  json: boolean,
): Promise<number> {
  if ((target.batchId === undefined) === (target.jobId === undefined))
    throw new UsageError('jobs graph needs --batch ID or --job ID (one of them)');
  let batchId = target.batchId;
  if (target.jobId !== undefined) {
    const job = await sluice.jobs.get(target.jobId);
    if (!job?.batchId) {
      process.stderr.write(`sluice jobs: job ${target.jobId} ${job ? 'is in no batch' : 'not found'}\n`);
      return 1;
    }
    batchId = job.batchId;
  }
  const graph = await sluice.batches.graph(batchId as number, page);
  if (json) {
    process.stdout.write(`${terminalJson({ batchId, ...graph })}\n`);
    return 0;
  }
  const list = (items: readonly string[]) =>
    items.length === 0 ? '-' : `${items.slice(0, SHOWN).join(' ')}${items.length > SHOWN ? ` …(${items.length})` : ''}`;
  const rows = graph.jobs.map((j) => [
    j.id,
    j.state,
    j.name,
    list(j.parents.map((p) => (p.outcome === 'pending' ? String(p.id) : `${p.id}:${p.outcome}`))),
    list(j.children.map(String)),
  ]);
  process.stdout.write(
    `${renderTable(['id', 'state', 'name', 'parents', 'children'], rows)}\n${graph.next ? `next page: --after ${graph.next}\n` : ''}`,
  );
  return 0;
}
