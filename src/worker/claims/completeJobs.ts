import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { valuesTable } from '../../db/valuesTable.ts';
import { ClaimLostError } from '../../errors.ts';
import { HISTORY_FROM_LIVE, HISTORY_INSERT_COLUMNS } from '../../history/historyColumns.ts';
import { type PayloadRedactor, redactCopied } from '../../redactPayload.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Deletes the finished jobs this claim still holds. Returns
 * affectedRows = ids.length, or fewer if some claims were lost (those rows are untouched).
 */
const sqlComplete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)`;

/**
 * Params: (job id, result JSON) for each of `results` rows, then lockId, ids (list). Copies the
 * finished jobs this claim still holds into job_history as completed, each with its handler's
 * result when it returned one (the results ride in the same statement, as a derived table: no
 * statement more per batch, and none at all when no job returned anything). A job that completes
 * again (after its earlier completion's claim was lost) overwrites its row. The update names the
 * SELECT's own columns (j.retry_times) rather than VALUES(retry_times), which MySQL 8.0.20+
 * deprecates; both servers accept it.
 */
const sqlCopyToHistory = (t: Tables, results: number) => `
INSERT INTO ${t.jobHistory} (${HISTORY_INSERT_COLUMNS})
SELECT ${HISTORY_FROM_LIVE}, 'completed', ${results > 0 ? 'r.result' : 'NULL'}
FROM ${t.jobs} j${results > 0 ? `\nLEFT JOIN (${valuesTable(['id', 'result'], results)}) r ON r.id = j.id` : ''}
WHERE j.lock_id = ?
  AND j.id IN (?)
ON DUPLICATE KEY UPDATE retry_times = j.retry_times, last_error = j.last_error, finished_at = NOW(3),
  outcome = 'completed', result = ${results > 0 ? 'r.result' : 'NULL'}`;

export interface CompleteOptions {
  /** Copy the jobs into job_history (historyRetentionMs > 0). */
  readonly history: boolean;
  /** Handler results to keep with the history rows, as JSON text, by job id (jobs without one are absent). */
  readonly results?: ReadonlyMap<number, string>;
  /** The install's redactPayload hook: what the history rows keep of each payload. */
  readonly redact?: PayloadRedactor | null;
}

/**
 * Fenced, batched completion: one statement for every finished job of one claim. Without
 * history it is one autocommit DELETE (re-run by the Executor after a transient conflict); with
 * history the copy (results included) and the delete share one short transaction (re-run whole
 * by withTransaction) — one commit, and a history row exists exactly when its job was removed.
 * Inside a caller's transaction (exactly-once) nothing is re-run here. Throws ClaimLostError when
 * some jobs were no longer held: without history the rest are deleted; with history nothing changes.
 */
export async function completeJobs(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: CompleteOptions = { history: false },
): Promise<void> {
  if (!options.history) return deleteFenced(db, tables, lockId, ids);
  const held = new Set(ids);
  const results = [...(options.results ?? [])].filter(([id]) => held.has(id));
  await withTransaction(db, async (tx) => {
    await tx.write(sqlCopyToHistory(tables, results.length), [...results.flat(), lockId, ids]);
    await redactCopied(tx, tables, 'history', ids, options.redact ?? null);
    await deleteFenced(tx, tables, lockId, ids);
  });
}

async function deleteFenced(db: Executor, tables: Tables, lockId: string, ids: readonly number[]): Promise<void> {
  const { affectedRows } = await db.write(sqlComplete(tables), [lockId, ids]);
  if (affectedRows !== ids.length) throw new ClaimLostError('complete', lockId, ids, ids.length - affectedRows);
}
