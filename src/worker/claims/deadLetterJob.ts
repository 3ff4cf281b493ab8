import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { DEAD_JOB_INSERT_COLUMNS } from '../../deadJobs/deadJobColumns.ts';
import { ClaimLostError } from '../../errors.ts';
import { leaveGroups } from '../../groups/leaveGroups.ts';
import { type CancelOptions, cancelDependents } from '../../jobControl/cancelJobs.ts';
import type { PayloadRedactor } from '../../payloadRedactor.ts';
import { redactCopied } from '../../redactPayload.ts';
import { leaveGraph } from '../../workflows/leaveGraph.ts';
import { recordFailedAttempt } from './recordFailedAttempt.ts';
import type { AttemptTrace } from './retryJob.ts';
import { writeJobLogs } from './writeJobLogs.ts';

/**
 * Params: ?1 retry_times to record, ?2 max_retries in force, ?3 last error, ?4 id, ?5 lockId.
 * Copies the claimed job into dead_jobs. Returns affectedRows 1, or 0 if the claim was lost.
 */
const sqlCopyToDead = (t: Tables) => `
INSERT INTO ${t.deadJobs} (${DEAD_JOB_INSERT_COLUMNS})
SELECT id, queue, name, payload, priority, ?, ?, batch_id, idempotency_key, ?, created_at, NOW(3)
FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?`;

/**
 * Params: ?1 id, ?2 lockId. Locks the claimed row and returns its flags and group (read here, not from the
 * claim: an enqueue may have named the job as a parent since), or nothing if the claim was lost.
 */
const sqlFlags = (t: Tables) => `
SELECT flags, queue, group_key, batch_id
FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?
FOR UPDATE`;

/** Params: ?1 id, ?2 lockId. Returns affectedRows 1, or 0 if the claim was lost. */
const sqlDeleteClaimed = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE id = ?
  AND lock_id = ?`;

/**
 * Moves a claimed job to dead_jobs in one transaction (re-run whole by withTransaction after a
 * transient conflict), fenced: if the claim was lost, ClaimLostError rolls it back and nothing moves.
 * A trace (the attempt that just failed: its error, its last log lines) is written in the same
 * transaction, the lines while the row is still there to fence them. A job of a workflow settles
 * its children in the same transaction: those that continue on failure count it off (and are
 * released once their last parent is done), the others are cancelled naming it (`cancel`: how a
 * cancel keeps them), as far as a CascadeBudget goes: deeper dependents stay held, doomed, for
 * reconcileHolds. Returns the queues of the children it released.
 */
export async function deadLetterJob(
  db: Executor,
  tables: Tables,
  job: { id: number; lockId: string; retryTimes: number; maxRetries: number },
  lastError: string,
  redact: PayloadRedactor | null = null,
  trace: AttemptTrace | null = null,
  cancel: CancelOptions = { history: false, keyRetentionMs: 0 },
): Promise<ReadonlyMap<string, number>> {
  return withTransaction(db, async (tx) => {
    const [row] = await tx.select<{
      flags: number;
      queue: string;
      group_key: string | null;
      batch_id: number | string | null;
    }>(sqlFlags(tables), [job.id, job.lockId]);
    if (row === undefined) throw new ClaimLostError('dead-letter', job.lockId, [job.id], 1);
    const copied = await tx.write(sqlCopyToDead(tables), [
      job.retryTimes,
      job.maxRetries,
      lastError,
      job.id,
      job.lockId,
    ]);
    if (copied.affectedRows !== 1) throw new ClaimLostError('dead-letter', job.lockId, [job.id], 1);
    await redactCopied(tx, tables, 'dead', [job.id], redact);
    if (trace) {
      await writeJobLogs(tx, tables, job.lockId, trace.logs);
      if (trace.failed) await recordFailedAttempt(tx, tables, trace.failed, trace.keep);
    }
    const deleted = await tx.write(sqlDeleteClaimed(tables), [job.id, job.lockId]);
    if (deleted.affectedRows !== 1) throw new ClaimLostError('dead-letter', job.lockId, [job.id], 1);
    const released = new Map<string, number>();
    if (Number(row.flags) === 0) return released;
    const leaving = {
      id: job.id,
      flags: Number(row.flags),
      queue: row.queue,
      group_key: row.group_key,
      batch_id: row.batch_id,
    };
    for (const [queue, n] of await leaveGroups(tx, tables, [leaving])) released.set(queue, n);
    const settled = await leaveGraph(tx, tables, [leaving], 'dead', cancel.history);
    await cancelDependents(tx, tables, settled.doomed, { ...cancel, released });
    for (const [queue, n] of settled.released) released.set(queue, (released.get(queue) ?? 0) + n);
    return released;
  });
}
