import { JobValidationError } from '../errors.ts';
import { keyOf } from '../idempotency/reserveIdempotencyKeys.ts';
import type { NormalizedJob } from '../model/validateJob.ts';

/**
 * What each job of one batch must meet to be written with it: no debounce (it replaces a waiting
 * job: one enqueue at a time), a place in a workflow only when the batch's graph was planned whole
 * (`graphPlanned`: enqueueBatch with an array), and an idempotency key not used earlier in the batch.
 */
export class BatchRules {
  /** Every (queue, key) of the batch so far. */
  readonly #keys = new Set<string>();

  constructor(private readonly graphPlanned: boolean) {}

  /** Throws JobValidationError naming job `index` and its field when it cannot be written with the batch. */
  check(job: NormalizedJob, index: number): void {
    if (job.flow.debounce !== null)
      throw new JobValidationError(
        index,
        'debounce',
        'needs sluice.enqueue (one job): a batch cannot replace a waiting job',
      );
    if (!this.graphPlanned && job.graph !== null && (job.graph.ref !== null || job.graph.parents.length > 0))
      throw new JobValidationError(
        index,
        job.graph.ref === null ? 'parents' : 'ref',
        'needs enqueueBatch with an array of jobs (a workflow is checked whole before it is written)',
      );
    if (job.idempotencyKey === null) return;
    const key = keyOf({ queue: job.queue, idempotencyKey: job.idempotencyKey });
    if (this.#keys.has(key))
      throw new JobValidationError(
        index,
        'idempotencyKey',
        `repeats a key used earlier in this batch (${job.idempotencyKey})`,
      );
    this.#keys.add(key);
  }
}
