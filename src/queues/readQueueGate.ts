import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue. Whether the queue has a limit (its claims then go through claimWithinLimits),
 * whether it is paused, and for how long a pause-until has yet to run (ms, DB clock; NULL: none).
 * No row: no limit, no pause. One primary-key read.
 */
const sqlGate = (t: Tables) => `
SELECT concurrency_cap IS NOT NULL OR rate_limit IS NOT NULL AS limited,
       paused_at IS NOT NULL AS paused,
       IF(paused_until > NOW(3), TIMESTAMPDIFF(MICROSECOND, NOW(3), paused_until) DIV 1000 + 1, NULL) AS paused_for_ms
FROM ${t.queues}
WHERE queue = ?`;

/** What a worker needs to know of a queue's row before it claims from it. */
export interface QueueGate {
  /** A cap or a rate: claims take the limited path. */
  readonly limited: boolean;
  /** Paused by an operator (until resumed). */
  readonly paused: boolean;
  /** Paused by a rate-limit signal for this much longer (ms), or 0. */
  readonly pausedForMs: number;
}

export const OPEN_GATE: QueueGate = { limited: false, paused: false, pausedForMs: 0 };

/**
 * Read by a worker whose claim found due jobs and got none (at most once per poll interval and
 * queue): it tells a claim lost to another worker apart from a queue that turned limited or paused.
 */
export async function readQueueGate(db: Executor, tables: Tables, queue: string): Promise<QueueGate> {
  const [row] = await db.select<{ limited: number; paused: number; paused_for_ms: number | string | null }>(
    sqlGate(tables),
    [queue],
  );
  if (!row) return OPEN_GATE;
  return {
    limited: Boolean(Number(row.limited)),
    paused: Boolean(Number(row.paused)),
    pausedForMs: row.paused_for_ms === null ? 0 : Math.max(0, Number(row.paused_for_ms)),
  };
}
