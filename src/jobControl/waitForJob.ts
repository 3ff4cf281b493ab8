import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { JobCancelledError, JobDeadError, JobNotFoundError, WaitTimeoutError } from '../errors.ts';
import { integerIn } from '../options.ts';
import { parseJson } from './parseJson.ts';

/**
 * Params: ?1 id (×3). Where the job is: one primary-key probe per table, one statement (one
 * snapshot), the result and the error only for a finished job.
 */
const sqlWhere = (t: Tables) => `
SELECT 'live' AS state, NULL AS result, NULL AS last_error FROM ${t.jobs} WHERE id = ?
UNION ALL
SELECT outcome, result, last_error FROM ${t.jobHistory} WHERE job_id = ?
UNION ALL
SELECT 'dead', NULL, last_error FROM ${t.deadJobs} WHERE id = ?`;

/** The first pause between two polls, and the shortest longest pause a wait may ask for. */
const FIRST_POLL_MS = 25;

export interface WaitOptions {
  /** Give up (WaitTimeoutError) after this long. @defaultValue 60,000 */
  readonly timeoutMs?: number;
  /**
   * The longest pause between two polls; they start at 25 ms and grow by half each time. At least
   * 25: a shorter one would poll the database hundreds of times a second. @defaultValue 1,000
   */
  readonly maxPollMs?: number;
}

/**
 * Waits until a job finishes, from any process (a web app waiting for a job a PM2 worker runs):
 * polls its primary key in the three tables, with backoff. Resolves with what its handler
 * returned (undefined if nothing was kept); rejects with JobDeadError (its last error),
 * JobCancelledError, WaitTimeoutError, or JobNotFoundError if the job is nowhere — never enqueued
 * (or not committed yet), or finished without a history row (historyRetentionMs 0, or pruned). An
 * at-most-once job is complete once removed, before its handler runs.
 */
export async function waitForJob(
  db: Executor,
  tables: Tables,
  id: number,
  options: WaitOptions = {},
): Promise<unknown> {
  const timeoutMs = integerIn('timeoutMs', options.timeoutMs ?? 60_000, 0);
  const maxPollMs = integerIn('maxPollMs', options.maxPollMs ?? 1_000, FIRST_POLL_MS);
  const deadline = Date.now() + timeoutMs;
  let pauseMs = FIRST_POLL_MS;
  for (;;) {
    const [row] = await db.select<{ state: string; result: string | null; last_error: string | null }>(
      sqlWhere(tables),
      [id, id, id],
    );
    if (!row) throw new JobNotFoundError(id);
    if (row.state === 'completed') return row.result === null ? undefined : parseJson(row.result);
    if (row.state === 'cancelled') throw new JobCancelledError(id);
    if (row.state === 'dead') throw new JobDeadError(id, row.last_error);
    const left = deadline - Date.now();
    if (left <= 0) throw new WaitTimeoutError(id, timeoutMs);
    await sleep(Math.min(pauseMs, left));
    pauseMs = Math.min(maxPollMs, pauseMs * 1.5);
  }
}
