import type { Executor } from '../../db/executor.ts';
import { idSet } from '../../db/idSet.ts';
import type { Tables } from '../../db/tables.ts';
import { CLAIMED_COLUMNS, type ClaimedRow, claimedFrom, waitedMsColumn } from './claimedRow.ts';
import { pickFromHead } from './claimRandomHead.ts';

/**
 * Params: ?1 queues (list), ?2 priorities (list: every head's), ?3 limit. The heads of several
 * queues in one range read of ix_head, in index order (queue, then priority / run_at / id; no
 * filesort), stopped by the limit: a shallow queue is read whole, and a deep one may take the
 * limit from the queues after it (claimAcrossQueues then reads those by SQL_HEADS).
 */
const SQL_HEADS_RANGE = (t: Tables) => `
SELECT id, queue, priority
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue IN (?)
  AND lock_id = ''
  AND priority IN (?)
  AND run_at <= NOW(3)
ORDER BY queue, priority, run_at, id
LIMIT ?`;

/**
 * Params: per queue (?queue, ?priorities (list), ?limit). The heads of several queues in one
 * statement: per queue the claim's bounded ix_head range (free, due, priority / run_at / id order,
 * no filesort), so a queue's backlog is never walked past its limit. A branch per queue (each
 * parsed and planned: about 0.07 ms here), for the queues a range read left unread.
 */
const SQL_HEADS = (t: Tables, queues: number) =>
  Array.from(
    { length: queues },
    () => `(SELECT id, queue, priority
 FROM ${t.jobs}
 WHERE queue = ?
   AND lock_id = ''
   AND priority IN (?)
   AND run_at <= NOW(3)
 ORDER BY priority, run_at, id
 LIMIT ?)`,
  ).join('\nUNION ALL\n');

/**
 * Params: ?1 lockId, then the idSet of the picked ids. Claims whichever are still free and due,
 * by primary key, unless their queue's row refuses (paused, or limited: the claimer then claims
 * that queue by claimWithinLimits). The gate is read per queue of the claimed rows (a primary-key
 * read; MariaDB caches it per distinct queue). affectedRows = rows claimed.
 */
const SQL_CLAIM = (t: Tables, ids: string) => `
UPDATE ${t.jobs} c
SET c.lock_id = ?,
    c.locked_at = NOW(3),
    c.claimed_at = NOW(3)
WHERE ${ids}
  AND c.lock_id = ''
  AND c.run_at <= NOW(3)
  AND NOT EXISTS (SELECT 1 FROM ${t.queues} q WHERE q.queue = c.queue AND (q.paused_at IS NOT NULL OR q.paused_until > NOW(3) OR q.concurrency_cap IS NOT NULL OR q.rate_limit IS NOT NULL))`;

/**
 * Params: ?1 queues (list), ?2 lockId. The rows this claim holds (its lockId is unique to the
 * statement), by one ix_head point per queue.
 */
const SQL_LOAD = (t: Tables) => `
SELECT ${CLAIMED_COLUMNS}, ${waitedMsColumn('locked_at')}
FROM ${claimedFrom(t)}
WHERE queue IN (?)
  AND lock_id = ?
ORDER BY queue, priority, run_at, id`;

/** The most queues one claim reads the heads of: one statement carries them all. */
export const QUEUES_PER_CLAIM = 50;

export interface WideClaimRequest {
  /** The queues (at most QUEUES_PER_CLAIM), each with its free priorities. */
  readonly heads: readonly { readonly queue: string; readonly priorities: readonly number[] }[];
  readonly want: number;
  readonly lockId: string;
  /** The most rows read of one queue's head. */
  readonly headSize: number;
}

/** What a claim across queues took, and the queues it found due jobs of and claimed none of. */
export interface WideClaim {
  readonly rows: ClaimedRow[];
  /** Queues of which it picked jobs and won none: another worker took them, or the queue's row refused. */
  readonly refused: string[];
  /** Queues whose head held no more due jobs than this claim read of it (it may have taken them all). */
  readonly drained: string[];
}

/**
 * The default claim (claimRandomHead) over several queues at once, for a worker subscribed to
 * many: one read of every queue's head (two when a deep queue fills the first: readHeads),
 * `want` jobs picked in turn across the queues (each queue's share at random within its best
 * priorities: pickFromHead), one fenced UPDATE by id, one read of what it won. Three or four
 * statements however many queues, so a claim across a thousand queues with a few jobs each fills
 * as a one-queue claim does. A single range read of 50 queues' heads took 1.5 ms here where a
 * branch per queue took 3.6 (bench/README.md, "A worker on many queues").
 */
export async function claimAcrossQueues(db: Executor, tables: Tables, req: WideClaimRequest): Promise<WideClaim> {
  const heads = req.heads.filter((h) => h.priorities.length > 0);
  if (heads.length === 0 || req.want <= 0) return { rows: [], refused: [], drained: [] };
  if (heads.length > QUEUES_PER_CLAIM) throw new RangeError(`at most ${QUEUES_PER_CLAIM} queues per claim`);
  // Enough of each head to fill the claim if the queues share it, twice over for the random pick.
  const perQueue = Math.min(req.headSize, Math.max(1, Math.ceil((2 * req.want) / heads.length)));
  const { byQueue, cut } = await readHeads(db, tables, heads, perQueue);
  const shares = sharesInTurn(
    [...byQueue.values()].map((h) => h.length),
    req.want,
  );
  const picked = new Map<string, number[]>();
  [...byQueue.entries()].forEach(([queue, head], i) => {
    if ((shares[i] as number) > 0) picked.set(queue, pickFromHead(head, shares[i] as number));
  });
  // Read whole (fewer rows than asked, not cut off by the read's limit) and every row picked.
  const drained = heads
    .filter((h) => {
      const read = byQueue.get(h.queue)?.length ?? 0;
      return read < perQueue && h.queue !== cut && read <= (picked.get(h.queue)?.length ?? 0);
    })
    .map((h) => h.queue);
  const ids = [...picked.values()].flat();
  if (ids.length === 0) return { rows: [], refused: [], drained };
  const set = idSet('c.id', ids);
  const { affectedRows } = await db.write(SQL_CLAIM(tables, set.sql), [req.lockId, ...set.params]);
  const rows =
    affectedRows === 0 ? [] : await db.select<ClaimedRow>(SQL_LOAD(tables), [[...picked.keys()], req.lockId]);
  const won = new Set(rows.map((r) => r.queue));
  const refused = [...picked.keys()].filter((q) => !won.has(q));
  // A refused queue's rows are still there (another worker, or its own row held them back).
  return { rows, refused, drained: drained.filter((q) => won.has(q)) };
}

type Head = WideClaimRequest['heads'][number];
type HeadRow = { id: number; priority: number };

/**
 * Up to `perQueue` free, due rows of each head, in priority / run_at / id order, by queue: one
 * range read of them all (SQL_HEADS_RANGE, `perQueue` rows a queue on average), and when a deep
 * queue took that read's limit, one more for the queues it left unread (SQL_HEADS, each bounded).
 * `cut`: the queue the range read stopped in (it holds more than was read), else null.
 */
async function readHeads(
  db: Executor,
  tables: Tables,
  heads: readonly Head[],
  perQueue: number,
): Promise<{ byQueue: Map<string, HeadRow[]>; cut: string | null }> {
  const limit = perQueue * heads.length;
  const priorities = [...new Set(heads.flatMap((h) => h.priorities))];
  const read = await db.select<{ id: number; queue: string; priority: number }>(SQL_HEADS_RANGE(tables), [
    heads.map((h) => h.queue),
    priorities,
    limit,
  ]);
  const free = new Map(heads.map((h) => [h.queue, new Set(h.priorities)]));
  const byQueue = new Map<string, HeadRow[]>();
  const add = (row: { id: number; queue: string; priority: number }) => {
    const list = byQueue.get(row.queue) ?? [];
    byQueue.set(row.queue, list);
    if (list.length < perQueue && free.get(row.queue)?.has(Number(row.priority)))
      list.push({ id: Number(row.id), priority: Number(row.priority) });
  };
  for (const row of read) add(row);
  const last = read.at(-1)?.queue;
  if (read.length < limit || last === undefined) return { byQueue, cut: null };
  // The limit stopped the read in `last`: the queues after it were not reached.
  const unread = heads.filter((h) => h.queue > last);
  if (unread.length > 0)
    for (const row of await db.select<{ id: number; queue: string; priority: number }>(
      SQL_HEADS(tables, unread.length),
      unread.flatMap((h) => [h.queue, h.priorities, perQueue]),
    ))
      add(row);
  return { byQueue, cut: last };
}

/**
 * Pure: how many of `want` each queue gets, given how many each has: one each in turn, queue by
 * queue, until `want` or every queue is spent — so a queue with one job gets it beside a queue
 * with a thousand.
 */
export function sharesInTurn(available: readonly number[], want: number): number[] {
  const shares = available.map(() => 0);
  let left = Math.min(
    want,
    available.reduce((a, b) => a + b, 0),
  );
  while (left > 0) {
    // Every queue still holding rows gets an equal part of what is left (at least one).
    const open = available.filter((n, i) => n > (shares[i] as number)).length;
    const each = Math.max(1, Math.floor(left / open));
    for (let i = 0; i < available.length && left > 0; i++) {
      const take = Math.min(each, (available[i] as number) - (shares[i] as number), left);
      shares[i] = (shares[i] as number) + take;
      left -= take;
    }
  }
  return shares;
}
