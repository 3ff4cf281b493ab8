import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import type { BoundedCount, QueueDepth } from './queueDepth.ts';

/**
 * Params: ?1 queues left out (a list; [''] for none), ?2 after queue (exclusive), ?3 limit, ?4 queues
 * left out, ?5 after queue, ?6 limit. The live and the dead jobs of the queues named after ?2, but
 * those left out, summed: the first `limit` entries of ix_head past that name (covering: queue,
 * lock_id, run_at) by state, with how many queues they hold; and the first `limit` entries of
 * ix_queue_failed past it (not re-driven: a row read each). `examined` says whether a read stopped
 * at its limit ("at least").
 */
const sqlOthers = (t: Tables) => `
SELECT l.examined, l.queues, l.ready, l.not_due, l.held, l.running, d.examined AS dead_examined, d.dead
FROM (
  SELECT COUNT(*) AS examined,
         COUNT(DISTINCT IF(w.kept, w.queue, NULL)) AS queues,
         COALESCE(SUM(w.kept AND w.lock_id = '' AND w.run_at <= NOW(3)), 0) AS ready,
         COALESCE(SUM(w.kept AND w.lock_id = '' AND w.run_at > NOW(3) AND w.run_at < '${HELD_RUN_AT}'), 0) AS not_due,
         COALESCE(SUM(w.kept AND w.lock_id = '' AND w.run_at = '${HELD_RUN_AT}'), 0) AS held,
         COALESCE(SUM(w.kept AND w.lock_id > ''), 0) AS running
  FROM (
    SELECT j.queue, j.lock_id, j.run_at, j.queue NOT IN (?) AS kept
    FROM ${t.jobs} j FORCE INDEX (ix_head)
    WHERE j.queue > ?
    ORDER BY j.queue, j.lock_id, j.priority, j.run_at
    LIMIT ?
  ) w
) l
CROSS JOIN (
  SELECT COUNT(*) AS examined, COALESCE(SUM(w.kept), 0) AS dead
  FROM (
    SELECT j.queue NOT IN (?) AND j.redriven_at IS NULL AS kept
    FROM ${t.deadJobs} j FORCE INDEX (ix_queue_failed)
    WHERE j.queue > ?
    ORDER BY j.queue, j.failed_at
    LIMIT ?
  ) w
) d`;

/** The name of the reading that sums the queues a pass did not read one by one: not a queue name. */
export const OTHERS_QUEUE = '(others)';

/** The queues past a cut, summed: how many, and their jobs by state (no oldest wait: not per queue). */
export interface OthersDepth extends Omit<QueueDepth, 'oldestReadyMs'> {
  /** How many queues with live jobs the sums cover (dead-only queues are not counted). */
  readonly queues: BoundedCount;
}

/**
 * The queues named after `after`, but those in `exclude` (read one by one elsewhere), summed: one
 * statement reading at most `max` entries of the live table's index and `max` of the dead jobs'
 * (each sum "at least" when its read stopped there).
 */
export async function othersDepth(
  db: Executor,
  tables: Tables,
  options: { readonly after: string; readonly exclude: readonly string[]; readonly max: number },
): Promise<OthersDepth> {
  const exclude = options.exclude.length === 0 ? [''] : [...options.exclude];
  const [row] = await db.select<Record<string, number | string>>(sqlOthers(tables), [
    exclude,
    options.after,
    options.max,
    exclude,
    options.after,
    options.max,
  ]);
  const live = Number(row?.examined ?? 0) < options.max;
  const dead = Number(row?.dead_examined ?? 0) < options.max;
  const count = (n: unknown, exact: boolean): BoundedCount => ({ count: Number(n ?? 0), exact });
  return {
    queues: count(row?.queues, live),
    ready: count(row?.ready, live),
    notDue: count(row?.not_due, live),
    held: count(row?.held, live),
    running: count(row?.running, live),
    dead: count(row?.dead, dead),
  };
}
