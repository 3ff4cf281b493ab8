import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { shownPayload } from '../model/storedPayload.ts';
import { integerIn } from '../options.ts';
import { type DeadJobFilter, deadJobConditions } from './deadJobFilter.ts';

/**
 * Params: filter values…, ?after id, ?limit. Returns dead jobs (not re-driven), oldest id first,
 * each with its payload wherever it is stored (apart, by primary key, when the row holds ''), and
 * whether it came from apart (payload_apart 1).
 */
const sqlList = (t: Tables, where: string) => `
SELECT id, queue, name, COALESCE(p.payload, ${t.deadJobs}.payload) AS payload, p.job_id IS NOT NULL AS payload_apart,
  priority, retry_times, max_retries,
  batch_id, idempotency_key, last_error, created_at, failed_at
FROM ${t.deadJobs}
LEFT JOIN ${t.jobPayloads} p ON p.job_id = ${t.deadJobs}.id AND ${t.deadJobs}.payload = ''
WHERE ${where}
  AND id > ?
ORDER BY id
LIMIT ?`;

export interface DeadJob {
  readonly id: number;
  readonly queue: string;
  readonly name: string;
  /** The payload as enqueued (stored text that is not JSON comes as it is); null when it was refused. */
  readonly payload: unknown;
  /** Why the stored payload was not read ("payload refused: …", as JobInfo.payloadRefused), or null. */
  readonly payloadRefused: string | null;
  readonly priority: number;
  readonly retryTimes: number;
  readonly maxRetries: number;
  readonly batchId: number | null;
  readonly idempotencyKey: string | null;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly failedAt: Date;
}

interface DeadJobRow {
  id: number;
  queue: string;
  name: string;
  payload: string;
  payload_apart: number | string;
  priority: number;
  retry_times: number;
  max_retries: number;
  batch_id: number | null;
  idempotency_key: string | null;
  last_error: string | null;
  created_at: Date;
  failed_at: Date;
}

/** One page of dead jobs (at most 1,000, 100 unless `limit` says); pass the last id as `afterId` for the next page. */
export async function listDeadJobs(
  db: Executor,
  tables: Tables,
  filter: DeadJobFilter = {},
  page: { afterId?: number; limit?: number } = {},
): Promise<DeadJob[]> {
  const limit = integerIn('limit', page.limit ?? 100, 1, 1_000);
  const afterId = integerIn('afterId', page.afterId ?? 0, 0);
  const { sql, params } = deadJobConditions(filter, tables);
  const rows = await db.select<DeadJobRow>(sqlList(tables, sql), [...params, afterId, limit]);
  return rows.map((r) => {
    const shown = shownPayload(r.payload, Number(r.payload_apart) === 1 ? 'apart' : 'row');
    return {
      id: Number(r.id),
      queue: r.queue,
      name: r.name,
      payload: shown.payload,
      payloadRefused: shown.refused,
      priority: r.priority,
      retryTimes: r.retry_times,
      maxRetries: r.max_retries,
      batchId: r.batch_id === null ? null : Number(r.batch_id),
      idempotencyKey: r.idempotency_key,
      lastError: r.last_error,
      createdAt: r.created_at,
      failedAt: r.failed_at,
    };
  });
}
