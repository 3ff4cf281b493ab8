import type { Link } from '@opentelemetry/api';
import type { Executor } from '../db/executor.ts';
import { idSet } from '../db/idSet.ts';
import type { Tables } from '../db/tables.ts';
import { linkTo } from './traceContext.ts';

/**
 * Params: the idSet of one claim's job ids. Returns the trace contexts of those that have one, by
 * primary key (a claim of consecutive ids is one range). A plain read, re-run by the Executor
 * after a transient conflict.
 */
const sqlRead = (t: Tables, ids: string) => `
SELECT job_id, traceparent, tracestate
FROM ${t.jobTraces}
WHERE ${ids}`;

interface TraceRow {
  job_id: number | string;
  traceparent: string;
  tracestate: string | null;
}

/**
 * One claim's links to the contexts its jobs were enqueued under, by job id: one statement per
 * claim, run only by a worker that has a tracer (jobs without a context are simply absent).
 */
export async function readTraceLinks(db: Executor, tables: Tables, ids: readonly number[]): Promise<Map<number, Link>> {
  const links = new Map<number, Link>();
  if (ids.length === 0) return links;
  const set = idSet('job_id', ids);
  for (const row of await db.select<TraceRow>(sqlRead(tables, set.sql), set.params)) {
    const link = linkTo(row);
    if (link) links.set(Number(row.job_id), link);
  }
  return links;
}
