import { JobValidationError } from '../errors.ts';
import type { NormalizedJob } from '../model/validateJob.ts';

/**
 * Pure: throws JobValidationError when job `index` cannot be written as part of a batch: a debounce
 * (it replaces a waiting job: one enqueue at a time), or a place in a workflow outside a batch whose
 * graph was planned whole (`graphPlanned`: enqueueBatch with an array).
 */
export function assertBatchable(job: NormalizedJob, index: number, graphPlanned: boolean): void {
  if (job.flow.debounce !== null)
    throw new JobValidationError(
      index,
      'debounce',
      'needs sluice.enqueue (one job): a batch cannot replace a waiting job',
    );
  if (!graphPlanned && job.graph !== null && (job.graph.ref !== null || job.graph.parents.length > 0))
    throw new JobValidationError(
      index,
      job.graph.ref === null ? 'parents' : 'ref',
      'needs enqueueBatch with an array of jobs (a workflow is checked whole before it is written)',
    );
}
