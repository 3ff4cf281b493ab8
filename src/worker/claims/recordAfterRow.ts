import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { recordFailedAttempt } from './recordFailedAttempt.ts';
import type { AttemptTrace } from './retryJob.ts';
import { writeJobLogs } from './writeJobLogs.ts';

/**
 * Keeps what an attempt left behind — its unwritten log lines, its error — when its job's row has
 * already left the live table for good: an at-most-once job (deleted before its handler ran) or
 * one cancelled while it ran. Unfenced (by job id: no claim can write to that job any more), in
 * one short transaction, re-run whole by withTransaction after a transient conflict.
 */
export async function recordAfterRow(db: Executor, tables: Tables, trace: AttemptTrace): Promise<void> {
  await withTransaction(db, async (tx) => {
    await writeJobLogs(tx, tables, null, trace.logs);
    if (trace.failed) await recordFailedAttempt(tx, tables, trace.failed, trace.keep);
  });
}
