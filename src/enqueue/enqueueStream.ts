import { writeSetRefusal } from '../db/mysqlErrors.ts';
import { chunkLimitsFor } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import { JobValidationError } from '../errors.ts';
import type { JobSpec } from '../model/job.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import { BatchWriter } from './BatchWriter.ts';
import { enqueueBatch } from './enqueueBatch.ts';

export interface EnqueueStreamOptions {
  /** One all-or-nothing batch for the whole stream (one transaction); otherwise each chunk commits as its own batch. */
  readonly atomic: boolean;
  /** Called after each chunk is written (atomic: written inside the open transaction). */
  readonly onChunk?: (progress: { received: number; count: number; skipped: number }) => void;
}

export const ENQUEUE_STREAM_KEYS = optionKeys<EnqueueStreamOptions>({ atomic: true, onChunk: true });

export interface EnqueueStreamResult {
  readonly received: number;
  readonly count: number;
  readonly skipped: number;
  /** The batches committed: one when atomic, one per chunk otherwise. */
  readonly batchIds: number[];
}

/**
 * Enqueues a stream of chunks of jobs (the CLI's NDJSON reader) with memory for one chunk. A
 * JobValidationError's index counts from the stream's first job; with `atomic`, it rolls the whole
 * stream back; without, the chunks before it stay committed and its own chunk writes nothing.
 */
export async function enqueueStream(
  runtime: SluiceRuntime,
  chunks: AsyncIterable<readonly JobSpec[]>,
  options: EnqueueStreamOptions,
): Promise<EnqueueStreamResult> {
  rejectUnknownKeys('sluice.enqueueStream', options, ENQUEUE_STREAM_KEYS);
  let received = 0;
  let count = 0;
  let skipped = 0;
  const batchIds: number[] = [];
  if (options.atomic) {
    const limits = chunkLimitsFor((await runtime.serverInfo()).maxAllowedPacket, runtime.options.maxRowsPerInsert);
    const result = await withTransaction(
      runtime.db,
      async (tx) => {
        const writer = await BatchWriter.open(runtime, tx, limits, null);
        for await (const chunk of chunks) {
          await writer.write(chunk);
          received += chunk.length;
          options.onChunk?.({ received, count: received, skipped: 0 });
        }
        return writer.close();
      },
      { attempts: 1 },
    ).catch((error: unknown) => {
      throw writeSetRefusal(error) ?? error;
    });
    ringAfterCommit(runtime, undefined, result.queues);
    if (result.batchId !== null) batchIds.push(result.batchId);
    return { received, count: result.count, skipped: result.skipped, batchIds };
  }
  for await (const chunk of chunks) {
    try {
      const result = await enqueueBatch(runtime, chunk);
      count += result.count;
      skipped += result.skipped;
      if (result.batchId !== null) batchIds.push(result.batchId);
    } catch (error) {
      if (error instanceof JobValidationError && error.index >= 0)
        throw new JobValidationError(received + error.index, error.field, error.reason);
      throw error;
    }
    received += chunk.length;
    options.onChunk?.({ received, count, skipped });
  }
  return { received, count, skipped, batchIds };
}
