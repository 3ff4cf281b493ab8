import type { Link } from '@opentelemetry/api';
import type { Executor } from '../db/executor.ts';
import { idSet } from '../db/idSet.ts';
import type { Tables } from '../db/tables.ts';
import type { JobRow } from '../model/job.ts';
import { linkTo } from './traceContext.ts';

/**
 * Params: the idSet of one claim's jobs enqueued alone (their contexts are in their rows), then
 * (when the claim holds batch jobs) the list of their batch ids (job_traces). Returns the trace
 * contexts those have, by primary key (a claim of consecutive ids is one range). A plain read,
 * re-run by the Executor after a transient conflict.
 */
const sqlRead = (t: Tables, jobs: string | null, batches: boolean) =>
  [
    jobs &&
      `SELECT 'job' AS kind, id, traceparent, tracestate FROM ${t.jobs} WHERE ${jobs} AND traceparent IS NOT NULL`,
    batches && `SELECT kind, id, traceparent, tracestate FROM ${t.jobTraces} WHERE kind = 'batch' AND id IN (?)`,
  ]
    .filter(Boolean)
    .join('\nUNION ALL\n');

interface TraceRow {
  kind: 'job' | 'batch';
  id: number | string;
  traceparent: string;
  tracestate: string | null;
}

/**
 * One claim's links to the contexts its jobs were enqueued under, by job id: a batch's jobs find
 * theirs by batch id (set by a batch enqueue, and kept by a re-drive), the others in their rows.
 * One statement per claim, run only by a worker that has a tracer; jobs without a context are
 * absent from the result.
 */
export async function readTraceLinks(
  db: Executor,
  tables: Tables,
  rows: readonly Pick<JobRow, 'id' | 'batch_id'>[],
): Promise<Map<number, Link>> {
  const alone = rows.filter((r) => r.batch_id === null).map((r) => Number(r.id));
  const batchIds = [...new Set(rows.filter((r) => r.batch_id !== null).map((r) => Number(r.batch_id)))];
  const links = new Map<number, Link>();
  if (alone.length === 0 && batchIds.length === 0) return links;
  const jobs = alone.length > 0 ? idSet('id', alone) : null;
  const params = [...(jobs?.params ?? []), ...(batchIds.length > 0 ? [batchIds] : [])];
  const byKey = new Map<string, Link>();
  for (const row of await db.select<TraceRow>(sqlRead(tables, jobs?.sql ?? null, batchIds.length > 0), params)) {
    const link = linkTo(row);
    if (link) byKey.set(`${row.kind}:${Number(row.id)}`, link);
  }
  if (byKey.size === 0) return links;
  for (const r of rows) {
    const link = byKey.get(r.batch_id === null ? `job:${Number(r.id)}` : `batch:${Number(r.batch_id)}`);
    if (link) links.set(Number(r.id), link);
  }
  return links;
}
