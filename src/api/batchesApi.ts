import { type BatchStatus, getBatch } from '../batches/getBatch.ts';
import { listBatches } from '../batches/listBatches.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { Guard } from './Guard.ts';

/** `sluice.batches`: submitted batches with their counts (counted through the batch_id indexes). */
export function batchesApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /** A batch's size, pending / succeeded / dead / cancelled counts and finishedAt; null if no such batch. */
    get: (batchId: number): Promise<BatchStatus | null> => guard(() => getBatch(db, tables, batchId)),
    /** One page of batches, newest first (keyset: pass `next` as `before`). */
    list: (page?: { before?: number; limit?: number }): Promise<{ batches: BatchStatus[]; next: number | null }> =>
      guard(() => listBatches(db, tables, page)),
  };
}

export type BatchesApi = ReturnType<typeof batchesApi>;
