import { type BatchStatus, getBatch } from '../batches/getBatch.ts';
import { listBatches } from '../batches/listBatches.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type GraphJob, type GraphPage, listGraph } from '../jobControl/listGraph.ts';
import { JOB_PAGE_KEYS, type JobPage } from '../jobControl/listJobs.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import { type FinishedGraph, readFinishedGraph } from '../workflows/readFinishedGraph.ts';
import type { Guard } from './Guard.ts';

export type { FinishedGraph, GraphJob, GraphPage };

const LIST_KEYS = optionKeys<{ before?: number; limit?: number }>({ before: true, limit: true });
const FINISHED_GRAPH_KEYS = optionKeys<{ limit?: number }>({ limit: true });

/** `sluice.batches`: submitted batches with their counts (counted through the batch_id indexes). */
export function batchesApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /** A batch's size, pending / succeeded / dead / cancelled counts and finishedAt; null if no such batch. */
    get: (batchId: number): Promise<BatchStatus | null> => guard(() => getBatch(db, tables, batchId)),
    /** One page of batches, newest first (keyset: pass `next` as `before`). */
    list: (page?: { before?: number; limit?: number }): Promise<{ batches: BatchStatus[]; next: number | null }> =>
      guard(() => {
        rejectUnknownKeys('sluice.batches.list(page)', page, LIST_KEYS);
        return listBatches(db, tables, page);
      }),
    /**
     * One page of a batch's graph as it stands: its live jobs (as `jobs.list({ batchId })` pages
     * them) each with its parents (how each ended, or 'pending') and live children. A finished job
     * leaves the graph; its live children still name it.
     */
    graph: (batchId: number, page?: JobPage): Promise<GraphPage> =>
      guard(() => {
        rejectUnknownKeys('sluice.batches.graph(batchId, page)', page, JOB_PAGE_KEYS);
        return listGraph(db, tables, batchId, page);
      }),
    /**
     * The finished part of a batch's graph: the edges of its jobs that finished (kept with the
     * history, for as long as it is), at most `limit` (200), and how the jobs they name ended.
     * With `graph`, the whole graph of a workflow that has run, or is running.
     */
    finishedGraph: (batchId: number, options?: { limit?: number }): Promise<FinishedGraph> =>
      guard(() => {
        rejectUnknownKeys('sluice.batches.finishedGraph(batchId, options)', options, FINISHED_GRAPH_KEYS);
        return readFinishedGraph(db, tables, batchId, options);
      }),
  };
}

export type BatchesApi = ReturnType<typeof batchesApi>;
