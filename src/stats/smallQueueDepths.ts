import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { valuesTable } from '../db/valuesTable.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/** Queues per statement: the names are a derived table of bound values, each a branch the server parses. */
const QUEUES_PER_STATEMENT = 500;

/**
 * Params: the names (`rows` of them), ?max, the names again, ?max. For each queue holding at most
 * `max` live jobs, its counts in one grouped read of its ix_head range (the index holds every
 * column counted: no row is read); for each holding at most `max` dead jobs, its dead jobs not
 * re-driven (ix_queue_failed, and the row for redriven_at). A queue holding more is left out of
 * its half: the dive that tells (its entry at `max`, one entry past the range's first `max`) reads
 * at most `max + 1` entries, and its counts are then read range by range with a limit each
 * (queueDepths). An empty queue answers with zeros.
 */
const sqlSmallDepths = (t: Tables, rows: number) => `
SELECT 'live' AS part, n.queue,
       COALESCE(SUM(j.lock_id = '' AND j.run_at <= NOW(3)), 0) AS ready,
       COALESCE(SUM(j.lock_id = '' AND j.run_at > NOW(3) AND j.run_at < '${HELD_RUN_AT}'), 0) AS not_due,
       COALESCE(SUM(j.lock_id = '' AND j.run_at = '${HELD_RUN_AT}'), 0) AS held,
       COALESCE(SUM(j.lock_id > ''), 0) AS running,
       TIMESTAMPDIFF(MICROSECOND, MIN(CASE WHEN j.lock_id = '' AND j.run_at <= NOW(3) THEN j.run_at END), NOW(3))
         DIV 1000 AS oldest_ready_ms
FROM (${valuesTable(['queue'], rows)}) n
LEFT JOIN ${t.jobs} j FORCE INDEX (ix_head) ON j.queue = n.queue
WHERE (SELECT 1 FROM ${t.jobs} k FORCE INDEX (ix_head)
       WHERE k.queue = n.queue ORDER BY k.lock_id, k.priority, k.run_at LIMIT 1 OFFSET ?) IS NULL
GROUP BY n.queue
UNION ALL
SELECT 'dead', n.queue, COALESCE(SUM(d.queue IS NOT NULL AND d.redriven_at IS NULL), 0), 0, 0, 0, NULL
FROM (${valuesTable(['queue'], rows)}) n
LEFT JOIN ${t.deadJobs} d FORCE INDEX (ix_queue_failed) ON d.queue = n.queue
WHERE (SELECT 1 FROM ${t.deadJobs} k FORCE INDEX (ix_queue_failed)
       WHERE k.queue = n.queue ORDER BY k.failed_at LIMIT 1 OFFSET ?) IS NULL
GROUP BY n.queue`;

/** A small queue's live counts, exact. */
export interface SmallLiveDepth {
  readonly ready: number;
  readonly notDue: number;
  readonly held: number;
  readonly running: number;
  readonly oldestReadyMs: number | null;
}

/** The exact counts of the queues small enough to count whole; a queue missing from a map holds more than `max`. */
export interface SmallDepths {
  readonly live: Map<string, SmallLiveDepth>;
  /** Dead jobs not re-driven. */
  readonly dead: Map<string, number>;
}

/**
 * The depths of the queues holding at most `max` jobs (live and dead apart), counted whole: one
 * statement per 500 queues, however many ranges of priorities and states they hold. Most queues
 * of an install are such, and counting each range with a limit of its own (a branch of a UNION
 * per priority and state) cost the server a parse and a temporary table per branch.
 */
export async function smallQueueDepths(
  db: Executor,
  t: Tables,
  names: readonly string[],
  max: number,
): Promise<SmallDepths> {
  const out: SmallDepths = { live: new Map(), dead: new Map() };
  for (let i = 0; i < names.length; i += QUEUES_PER_STATEMENT) {
    const chunk = names.slice(i, i + QUEUES_PER_STATEMENT);
    const rows = await db.select<{
      part: 'live' | 'dead';
      queue: string;
      ready: number | string;
      not_due: number | string;
      held: number | string;
      running: number | string;
      oldest_ready_ms: number | string | null;
    }>(sqlSmallDepths(t, chunk.length), [...chunk, max, ...chunk, max]);
    for (const r of rows) {
      if (r.part === 'dead') {
        out.dead.set(r.queue, Number(r.ready));
        continue;
      }
      out.live.set(r.queue, {
        ready: Number(r.ready),
        notDue: Number(r.not_due),
        held: Number(r.held),
        running: Number(r.running),
        oldestReadyMs: r.oldest_ready_ms === null ? null : Number(r.oldest_ready_ms),
      });
    }
  }
  return out;
}
