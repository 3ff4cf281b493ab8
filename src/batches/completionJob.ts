import { RESERVED_KEY_PREFIX } from '../model/reservedKeyPrefix.ts';

/**
 * A batch's completion job as the batches row stores it (JSON in `on_complete`), validated at
 * enqueue: finishBatches enqueues it once, adding the batch's summary to its payload.
 */
export interface StoredCompletionJob {
  readonly queue: string;
  readonly name: string;
  /** JSON text of an object. */
  readonly payload: string;
  readonly priority: number;
  readonly maxRetries: number | null;
}

/** The idempotency key of a batch's completion job: one per batch, whichever process finishes it. */
export function completionJobKey(batchId: number): string {
  return `${RESERVED_KEY_PREFIX}batch-complete:${batchId}`;
}
