import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/**
 * Params: ?1 ids (list). Makes free jobs due now: run_at = NOW(3) for those not yet due (a due
 * job keeps its place in the line). A running job (lock_id set) is left alone: it is fenced out
 * by `lock_id = ''`, and a held job (a workflow's child waiting for its parents) by its run_at:
 * only its last parent releases it. affectedRows = jobs matched (mysql2 counts matched rows). Autocommit: re-run
 * by the Executor after a transient conflict.
 */
const sqlRunNow = (t: Tables, retryingOnly: boolean) => `
UPDATE ${t.jobs}
SET run_at = NOW(3)
WHERE id IN (?)
  AND lock_id = ''
  AND run_at > NOW(3)
  AND run_at < '${HELD_RUN_AT}'${retryingOnly ? '\n  AND retry_times > 0' : ''}`;

/**
 * Params: ?1 delay in microseconds, ?2 ids (list). Reschedules free jobs to NOW(3) + delay on the
 * DB clock. affectedRows = jobs matched. Autocommit: re-run by the Executor after a transient conflict.
 */
const sqlReschedule = (t: Tables) => `
UPDATE ${t.jobs}
SET run_at = NOW(3) + INTERVAL ? MICROSECOND
WHERE id IN (?)
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'`;

/** Params: ?1 time, ?2 ids (list). Reschedules free jobs to that time. affectedRows = jobs matched. */
const sqlRescheduleAt = (t: Tables) => `
UPDATE ${t.jobs}
SET run_at = ?
WHERE id IN (?)
  AND lock_id = ''
  AND run_at < '${HELD_RUN_AT}'`;

/** Params: ?1 ids (list). The queues of those of the jobs that are free, with how many each: the workers to wake. */
const sqlFreeQueues = (t: Tables) => `
SELECT queue, COUNT(*) AS jobs
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ''
GROUP BY queue`;

/**
 * Run now (delayed or retrying jobs), retry now (`retryingOnly`: a job waiting out its backoff),
 * or reschedule (`delayMs` on the DB clock, or `runAt`: any free job, earlier or later). By primary key, one statement;
 * returns how many jobs changed (a job that is running, finished, or not in the state asked for is
 * left as it is) and, when some did, the queues of the free jobs among `ids` (one more read), so
 * that their idle workers can be rung: a worker asleep until the old run_at learns the new one. A
 * job made due runs after the due jobs ahead of it: those of a better priority, and those of its
 * own with an earlier run_at.
 */
export async function runJobsNow(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  options: { retryingOnly?: boolean; delayMs?: number; runAt?: Date } = {},
): Promise<{ changed: number; queues: Map<string, number> }> {
  const changed = await update(db, tables, ids, options);
  const queues = new Map<string, number>();
  if (changed === 0) return { changed, queues };
  for (const row of await db.select<{ queue: string; jobs: number | string }>(sqlFreeQueues(tables), [ids]))
    queues.set(row.queue, Number(row.jobs));
  return { changed, queues };
}

async function update(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  options: { retryingOnly?: boolean; delayMs?: number; runAt?: Date },
): Promise<number> {
  if (ids.length === 0) return 0;
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 1) throw new OptionsError('id', `must be a job id (got ${String(id)})`);
  }
  if (options.runAt !== undefined) {
    if (!(options.runAt instanceof Date) || !Number.isFinite(options.runAt.getTime())) {
      throw new OptionsError('runAt', 'must be a valid Date');
    }
    if (options.delayMs !== undefined) throw new OptionsError('runAt', 'and delayMs exclude each other');
    return (await db.write(sqlRescheduleAt(tables), [options.runAt, ids])).affectedRows;
  }
  if (options.delayMs !== undefined) {
    if (!Number.isFinite(options.delayMs) || options.delayMs < 0) {
      throw new OptionsError('delayMs', `must be a non-negative number of milliseconds (got ${options.delayMs})`);
    }
    return (await db.write(sqlReschedule(tables), [Math.round(options.delayMs * 1000), ids])).affectedRows;
  }
  return (await db.write(sqlRunNow(tables, options.retryingOnly === true), [ids])).affectedRows;
}
