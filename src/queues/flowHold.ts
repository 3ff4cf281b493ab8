import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue, ?2 group. The group's rate (its own, else its queue's default) and its pause
 * still to come: one primary-key read of job_groups, one of queues.
 */
const sqlGroup = (t: Tables) => `
SELECT COALESCE(g.rate_limit, q.group_rate_limit) AS rate_limit,
       IF(g.paused_until > NOW(3), g.paused_until, NULL) AS paused_until
FROM ${t.jobGroups} g
LEFT JOIN ${t.queues} q ON q.queue = g.queue
WHERE g.queue = ?
  AND g.group_key = ?`;

/** Params: ?1 job id. The debounce key a waiting job holds (ix_job), if any. */
const sqlDebounce = (t: Tables) => `
SELECT debounce_key
FROM ${t.jobDebounces}
WHERE job_id = ?
LIMIT 1`;

/** Why a waiting job's start was set where it is by flow control at enqueue, and until when. */
export interface FlowHold {
  /**
   * group-rate: its group's rate reserved this start for it; group-paused: a handler paused its
   * group until then; debounced: it waits for more jobs of its debounce key until then.
   */
  readonly reason: 'group-rate' | 'group-paused' | 'debounced';
  readonly group: string | null;
  readonly debounceKey: string | null;
  /** Its run_at: the reserved start, the pause's end, or the debounce's end. */
  readonly until: Date;
}

/**
 * For a job not yet due: what of its flow control set its start, or null. A job with no group and
 * no debounce costs one primary-key probe of job_debounces' ix_job; a grouped one one more read.
 */
export async function flowHold(
  db: Executor,
  tables: Tables,
  job: { id: number; queue: string; group: string | null; runAt: Date },
): Promise<FlowHold | null> {
  const [debounce] = await db.select<{ debounce_key: string }>(sqlDebounce(tables), [job.id]);
  if (debounce) return { reason: 'debounced', group: job.group, debounceKey: debounce.debounce_key, until: job.runAt };
  if (job.group === null) return null;
  const [group] = await db.select<{ rate_limit: number | null; paused_until: Date | null }>(sqlGroup(tables), [
    job.queue,
    job.group,
  ]);
  if (!group) return null;
  if (group.paused_until !== null)
    return { reason: 'group-paused', group: job.group, debounceKey: null, until: job.runAt };
  if (group.rate_limit !== null) return { reason: 'group-rate', group: job.group, debounceKey: null, until: job.runAt };
  return null;
}
