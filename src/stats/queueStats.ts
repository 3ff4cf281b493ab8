import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: none. Per queue: ready (free, due), delayed (free, not yet due), running (claimed),
 * and the age of the oldest ready job in ms, all on the DB clock. One pass over the live table.
 */
const sqlLiveCounts = (t: Tables) => `
SELECT queue,
       SUM(lock_id = '' AND run_at <= NOW(3)) AS ready,
       SUM(lock_id = '' AND run_at > NOW(3)) AS delayed_count,
       SUM(lock_id <> '') AS running,
       TIMESTAMPDIFF(MICROSECOND, MIN(CASE WHEN lock_id = '' AND run_at <= NOW(3) THEN run_at END), NOW(3)) DIV 1000 AS oldest_ready_ms
FROM ${t.jobs}
GROUP BY queue`;

/** Params: none. Dead jobs per queue (re-driven rows are history: their job is live again). */
const sqlDeadCounts = (t: Tables) => `
SELECT queue, COUNT(*) AS dead
FROM ${t.deadJobs}
WHERE redriven_at IS NULL
GROUP BY queue`;

export interface QueueStats {
  readonly queue: string;
  readonly ready: number;
  readonly delayed: number;
  readonly running: number;
  readonly dead: number;
  /** Age of the oldest ready job, or null when none is ready. */
  readonly oldestReadyMs: number | null;
}

export async function queueStats(db: Executor, tables: Tables): Promise<QueueStats[]> {
  const [live, dead] = await Promise.all([
    db.select<{
      queue: string;
      ready: string | number;
      delayed_count: string | number;
      running: string | number;
      oldest_ready_ms: string | number | null;
    }>(sqlLiveCounts(tables)),
    db.select<{ queue: string; dead: string | number }>(sqlDeadCounts(tables)),
  ]);
  const byQueue = new Map<string, QueueStats>();
  for (const row of live) {
    byQueue.set(row.queue, {
      queue: row.queue,
      ready: Number(row.ready),
      delayed: Number(row.delayed_count),
      running: Number(row.running),
      dead: 0,
      oldestReadyMs: row.oldest_ready_ms === null ? null : Number(row.oldest_ready_ms),
    });
  }
  for (const row of dead) {
    const entry = byQueue.get(row.queue) ?? {
      queue: row.queue,
      ready: 0,
      delayed: 0,
      running: 0,
      dead: 0,
      oldestReadyMs: null,
    };
    byQueue.set(row.queue, { ...entry, dead: Number(row.dead) });
  }
  return [...byQueue.values()].sort((a, b) => a.queue.localeCompare(b.queue));
}
