import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { DEAD_JOB_INSERT_COLUMNS } from '../deadJobs/deadJobColumns.ts';
import { leaveGroups } from '../groups/leaveGroups.ts';
import { type CancelOptions, cancelDependents } from '../jobControl/cancelJobs.ts';
import type { PayloadRedactor } from '../payloadRedactor.ts';
import { redactCopied } from '../redactPayload.ts';
import { leaveGraph } from '../workflows/leaveGraph.ts';

/**
 * Params: ?1 ids (list). Locks the free jobs among those ids whose explicit max_retries is used
 * up (rows with NULL max_retries follow their definition, which only workers know: a worker
 * dead-letters those when it claims them). Returns their ids, flags and groups. Never waits on a row another
 * transaction holds (SKIP LOCKED): such a job is dead-lettered by the worker that next claims it.
 */
const sqlLockExhausted = (t: Tables) => `
SELECT id, flags, queue, group_key, batch_id
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ''
  AND max_retries IS NOT NULL
  AND retry_times > max_retries
ORDER BY id
FOR UPDATE SKIP LOCKED`;

/** Params: ?1 ids (list, locked). Copies them to dead_jobs with their own counts and last error. */
const sqlCopyToDead = (t: Tables) => `
INSERT INTO ${t.deadJobs} (${DEAD_JOB_INSERT_COLUMNS})
SELECT id, queue, name, payload, priority, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at, NOW(3)
FROM ${t.jobs}
WHERE id IN (?)`;

/** Params: ?1 ids (list, locked). affectedRows = jobs moved. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE id IN (?)`;

/** What the maintenance process's dead-lettering needs besides the ids: the install's rules. */
export interface DeadLetterRules {
  /** The install's redactPayload hook: what the dead rows keep of each payload. */
  readonly redact: PayloadRedactor | null;
  /** How the dependents a dead job dooms are kept (as a cancel keeps them). */
  readonly cancel: CancelOptions;
  /** Told, after each commit, of the queues of jobs it released (children that continue on failure, group slots). */
  readonly onReleased: ((queues: ReadonlyMap<string, number>) => void) | null;
}

/**
 * Moves the exhausted jobs among `ids` (just released by the maintenance process) to dead_jobs, in slices of
 * `batchSize`, one short transaction each (re-run whole by withTransaction after a transient
 * conflict). Returns how many moved. A workflow's job leaves its graph in the same transaction, as
 * a worker's dead-lettering does: its own edges go, and its children are settled — those that
 * continue on failure count it off (released once their last parent is done), the others are
 * cancelled naming it, and so is what depends on them, as far as a CascadeBudget goes (deeper
 * dependents stay held, doomed, for reconcileHolds). Nothing is left for a later pass to guess.
 */
export async function deadLetterExhausted(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  batchSize: number,
  rules: DeadLetterRules,
): Promise<number> {
  let moved = 0;
  for (let i = 0; i < ids.length; i += batchSize) {
    const slice = ids.slice(i, i + batchSize);
    const released = new Map<string, number>();
    moved += await withTransaction(db, async (tx) => {
      released.clear();
      const rows = await tx.select<{
        id: number;
        flags: number;
        queue: string;
        group_key: string | null;
        batch_id: number | string | null;
      }>(sqlLockExhausted(tables), [slice]);
      const locked = rows.map((r) => Number(r.id));
      if (locked.length === 0) return 0;
      await tx.write(sqlCopyToDead(tables), [locked]);
      await redactCopied(tx, tables, 'dead', locked, rules.redact);
      const { affectedRows } = await tx.write(sqlDelete(tables), [locked]);
      const leaving = rows.map((r) => ({
        id: Number(r.id),
        flags: Number(r.flags),
        queue: r.queue,
        group_key: r.group_key,
        batch_id: r.batch_id,
      }));
      for (const [queue, n] of await leaveGroups(tx, tables, leaving)) released.set(queue, n);
      const settled = await leaveGraph(tx, tables, leaving, 'dead', rules.cancel.history);
      await cancelDependents(tx, tables, settled.doomed, { ...rules.cancel, released });
      for (const [queue, n] of settled.released) released.set(queue, (released.get(queue) ?? 0) + n);
      return affectedRows;
    });
    if (released.size > 0) rules.onReleased?.(released);
  }
  return moved;
}
