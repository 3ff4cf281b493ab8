import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Columns of a queue's row (alias `q`, joined by primary key; NULL when the queue has none) that can
 * hold its due jobs back: an operator's pause, a pause-until still to come, the cap, and the rate
 * window's count (0 once the window has passed) with the window's end (DB clock).
 */
export const queueHoldColumns = (q: string) => `${q}.paused_at IS NOT NULL AS q_paused,
       IF(${q}.paused_until > NOW(3), ${q}.paused_until, NULL) AS q_paused_until,
       ${q}.concurrency_cap AS q_cap, ${q}.rate_limit AS q_rate_limit,
       IF(${q}.rate_window_ms + ${q}.rate_interval_ms > FLOOR(UNIX_TIMESTAMP(NOW(3)) * 1000), ${q}.rate_used, 0) AS q_rate_used,
       FROM_UNIXTIME((${q}.rate_window_ms + ${q}.rate_interval_ms) / 1000) AS q_window_end`;

/** What queueHoldColumns read. */
export interface QueueHoldColumns {
  q_paused: number | null;
  q_paused_until: Date | null;
  q_cap: number | null;
  q_rate_limit: number | null;
  q_rate_used: number | string | null;
  q_window_end: Date | null;
}

/** Params: ?1 queue, ?2 cap. The queue's claimed jobs, stopped at the cap (at most `cap` ix_head entries). */
const sqlRunning = (t: Tables) => `
SELECT COUNT(*) AS running
FROM (SELECT 1 FROM ${t.jobs} WHERE queue = ? AND lock_id > '' LIMIT ?) AS claimed`;

/** Why a queue holds its due jobs back now, and until when if that is known. */
export interface QueueHold {
  /**
   * paused: by an operator, until resumed; paused-until: by a handler's rate-limit signal;
   * concurrency: at its cap, until a running job ends; rate: its window used up, until the window ends.
   */
  readonly reason: 'paused' | 'paused-until' | 'concurrency' | 'rate';
  readonly until: Date | null;
}

/**
 * What holds `queue`'s due jobs back now, or null, from its row's columns: no statement, but a
 * bounded count for a capped queue.
 */
export async function queueHold(
  db: Executor,
  tables: Tables,
  queue: string,
  row: QueueHoldColumns,
): Promise<QueueHold | null> {
  if (Number(row.q_paused)) return { reason: 'paused', until: null };
  if (row.q_paused_until) return { reason: 'paused-until', until: row.q_paused_until };
  if (row.q_cap !== null) {
    const cap = Number(row.q_cap);
    const [counted] = await db.select<{ running: number | string }>(sqlRunning(tables), [queue, cap]);
    if (Number(counted?.running ?? 0) >= cap) return { reason: 'concurrency', until: null };
  }
  if (row.q_rate_limit !== null && Number(row.q_rate_used) >= Number(row.q_rate_limit))
    return { reason: 'rate', until: row.q_window_end };
  return null;
}
