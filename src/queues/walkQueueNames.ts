import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * The live table's queue names by bounded reads of ix_head, for when the server will not answer
 * `GROUP BY queue` by a loose index scan (listQueueNames asks it first): each statement reads the
 * next WALK_ENTRIES index entries after a name and groups them, so it costs the same whatever
 * the queues hold; a queue deeper than that is stepped over by one dive for its greatest lock_id.
 */

/**
 * Index entries one walk statement reads at most (the server counts each about four times as it
 * groups them). A walk's first read takes four entries per name it wants (at least 500), and each
 * read after it twice the one before, up to this.
 */
export const WALK_ENTRIES = 5_000;

/** Statements one walk sends at most (reads and dives): a page may stop short of its limit, and says where. */
export const WALK_STATEMENTS = 4;

/**
 * Params: ?1 lower bound (exclusive), ?2 entries. The queues among the next entries of
 * ix_head after a name, each with how many of those entries it holds and its greatest lock_id
 * among them: a range read in index order stopped by the limit, grouped in a temporary table.
 */
const sqlWalk = (t: Tables) => `
SELECT queue, COUNT(*) AS entries, MAX(lock_id) AS top_lock
FROM (SELECT queue, lock_id
      FROM ${t.jobs} FORCE INDEX (ix_head)
      WHERE queue > ?
      ORDER BY queue, lock_id
      LIMIT ?) w
GROUP BY queue
ORDER BY queue`;

/** Param: ?1 queue. Its greatest lock_id: one dive at the end of its ix_head range. */
const sqlTopLock = (t: Tables) => `
SELECT MAX(lock_id) AS top_lock
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?`;

export interface WalkedQueue {
  readonly name: string;
  readonly topLock: string;
}

export interface QueueWalk {
  /** Queues after `after`, in name order, each read whole (or dived into): at most `limit`. */
  readonly queues: WalkedQueue[];
  /** The name to go on after when the walk stopped before the table's last queue, else null. */
  readonly next: string | null;
}

/**
 * Up to `limit` queue names after `after` in WALK_STATEMENTS statements or fewer. The last queue of
 * a read that filled WALK_ENTRIES may go on past it: it is left to the next read, which begins at
 * it — unless it is the read's only queue, which a dive then finishes.
 */
export async function walkQueueNames(db: Executor, t: Tables, after: string, limit: number): Promise<QueueWalk> {
  const queues: WalkedQueue[] = [];
  let from = after;
  let size = Math.min(WALK_ENTRIES, Math.max(500, 4 * limit));
  for (let statements = 0; statements < WALK_STATEMENTS; statements++, size = Math.min(WALK_ENTRIES, 2 * size)) {
    const read = await db.select<{ queue: string; entries: number | string; top_lock: string }>(sqlWalk(t), [
      from,
      size,
    ]);
    const entries = read.reduce((sum, r) => sum + Number(r.entries), 0);
    const whole = entries < size ? read : read.slice(0, -1);
    for (const r of whole) {
      queues.push({ name: r.queue, topLock: r.top_lock });
      if (queues.length === limit) return { queues, next: r.queue };
    }
    if (entries < size) return { queues, next: null };
    const cut = read[read.length - 1] as { queue: string };
    if (whole.length > 0) {
      from = (whole[whole.length - 1] as { queue: string }).queue;
      continue;
    }
    // One queue filled the read: its greatest lock_id by a dive, and the walk goes on after it.
    if (++statements === WALK_STATEMENTS) break;
    const [top] = await db.select<{ top_lock: string }>(sqlTopLock(t), [cut.queue]);
    queues.push({ name: cut.queue, topLock: top?.top_lock ?? '' });
    from = cut.queue;
    if (queues.length === limit) break;
  }
  return { queues, next: queues.length > 0 ? (queues[queues.length - 1] as WalkedQueue).name : from };
}
