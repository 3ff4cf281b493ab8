import type { Span } from '@opentelemetry/api';
import type { JobRow } from '../model/job.ts';
import { startAttemptSpan } from '../tracing/jobSpans.ts';
import type { AttemptDeps } from './attemptJob.ts';
import type { TracedClaim } from './ClaimLoop.ts';

/** The span of one attempt, from its claim: its job, its handler's delivery mode, its enqueue's link. */
export function attemptSpan(traced: TracedClaim, row: JobRow, workerId: string, deps: AttemptDeps): Span {
  const id = Number(row.id);
  const job = {
    id,
    queue: row.queue,
    name: row.name,
    retryTimes: row.retry_times,
    batchId: row.batch_id === null ? null : Number(row.batch_id),
    delivery: deps.handlers.has(row.name) ? (deps.handlers.get(row.name)?.delivery ?? 'at-least-once') : undefined,
  };
  return startAttemptSpan(traced.tracer, job, workerId, traced.claimedAt, traced.links.get(id));
}
