/**
 * A trace context as sluice stores it with a job (jobs.traceparent and jobs.tracestate) or a batch
 * (job_traces): W3C Trace Context headers' values, made by tracing/traceContext.ts.
 */
export interface StoredTraceContext {
  readonly traceparent: string;
  readonly tracestate: string | null;
}
