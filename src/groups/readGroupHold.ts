import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 job id. Why a held job waits for its group: its hold (primary key), its group's row and
 * its queue's defaults (primary keys): the group, the limit in force, the slots taken, and the
 * run_at the job gets back on release.
 */
const sqlGroupHold = (t: Tables) => `
SELECT h.group_key, h.run_at,
       COALESCE(g.concurrency_limit, q.group_concurrency, q.fair_window) AS effective_limit,
       q.fair_window IS NOT NULL AND g.concurrency_limit IS NULL AND q.group_concurrency IS NULL AS fair,
       COALESCE(g.active, 0) AS active
FROM ${t.jobHolds} h
LEFT JOIN ${t.jobGroups} g ON g.queue = h.queue AND g.group_key = h.group_key
LEFT JOIN ${t.queues} q ON q.queue = h.queue
WHERE h.job_id = ?
  AND h.reason = 'group'`;

/** A job held back by its group's limit: what `jobs.get` says of it. */
export interface GroupHold {
  readonly group: string;
  /** The group's limit in force (its own, the queue's groupConcurrency, or the fair queue's window). */
  readonly limit: number | null;
  /** The limit is the fair queue's window, not a concurrency limit. */
  readonly fair: boolean;
  /** The group's slots taken now. */
  readonly active: number;
  /** The run_at the job gets back when released (or now, if that has passed). */
  readonly runAt: Date;
}

/** Why a held job waits for its group, or null when it does not (one statement, by primary keys). */
export async function readGroupHold(db: Executor, tables: Tables, jobId: number): Promise<GroupHold | null> {
  const [row] = await db.select<{
    group_key: string;
    run_at: Date;
    effective_limit: number | string | null;
    fair: number;
    active: number | string;
  }>(sqlGroupHold(tables), [jobId]);
  if (row === undefined) return null;
  return {
    group: row.group_key,
    limit: row.effective_limit === null ? null : Number(row.effective_limit),
    fair: Number(row.fair) === 1,
    active: Number(row.active),
    runAt: row.run_at,
  };
}
