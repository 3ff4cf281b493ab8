import { binaryOrder } from '../db/binaryOrder.ts';
import type { Tables } from '../db/tables.ts';
import { isLocalWorker } from './localRing.ts';
import { findParked, isToken, type RunOn, type SessionIdentity } from './parkedSleep.ts';

/**
 * Params: ?1 queues (list, at most QUEUES_PER_READ), ?2 limit (ROWS_PER_READ). The doorbells of
 * those queues in primary-key order: one range of the primary key per queue, at most `limit` rows
 * in all (rows past it are not read: the caller reads the queues after the last row's again).
 */
const sqlDoorbells = (t: Tables) => `
SELECT queue, worker_id, server, connection_id, token, db_user
FROM ${t.doorbells}
WHERE queue IN (?)
ORDER BY queue, worker_id
LIMIT ?`;

/**
 * Params: ?1 worker ids (list), ?2 tokens (list). The rows of registrations whose connection is
 * gone (their worker died or reconnected): fenced by the token, so a registration made since stays.
 */
const sqlForgetGone = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id IN (?)
  AND token IN (?)`;

/** How long an enqueuing process trusts its copy of a queue's doorbells (they change when workers start and stop). */
export const DOORBELL_CACHE_MS = 1_000;
/**
 * …and a copy that holds no doorbell seen asleep: a worker that starts on an idle queue is rung
 * within this long (with the longer wait the first jobs after it started waited for its poll).
 * One indexed read (and, if it found doorbells not yet seen, a read of the process list) per this
 * period per queue while a queue has no worker to ring.
 */
export const NO_DOORBELL_CACHE_MS = 100;
/**
 * Rows kept per queue. A queue with more idle workers than this: the others are woken by their
 * polls (and rows left by crashed workers until maintenance removes them, or written by anyone
 * who may INSERT, cost no more than this).
 */
export const DOORBELLS_PER_QUEUE = 256;
/**
 * Queues one read of the doorbells asks for: an IN-list of at most this many names (about 33 KB of
 * text). Under MariaDB's in_predicate_conversion_threshold (1,000), past which the list becomes a
 * join that reads and sorts every row of its queues before the LIMIT (measured: 10,000 rows read
 * and sorted for 2,048 returned; at 500 names, 2,048 read in key order, no sort).
 */
export const QUEUES_PER_READ = 500;
/** Rows one read of the doorbells returns at most, whatever its queues hold. */
export const ROWS_PER_READ = 2_048;
/**
 * Reads of the doorbells per round: a ring after a commit over N queues costs at most this many
 * (and a read of the process list and a DELETE of the rows found gone per read, and the KILLs);
 * the queues past them are rung in the next round.
 */
export const READS_PER_ROUND = 8;
/**
 * The most queues whose copy a ringer keeps, and the most doorbells in all of them: past either,
 * the copies read longest ago go (a copy is fresh for a second at most, so what goes is at worst
 * read again). A process that enqueues to ever new queues keeps a bounded copy.
 */
export const CACHED_QUEUES = 10_000;
export const CACHED_DOORBELLS = 50_000;

export interface DoorbellRow {
  readonly workerId: string;
  readonly server: string;
  readonly connectionId: number;
  readonly token: string;
  readonly user: string;
}

/** Those of a queue's doorbells, as last read, that were seen asleep over the ringer's connection. */
interface CachedDoorbells {
  parked: DoorbellRow[];
  readonly readAt: number;
}

/** What one round found: each queue's ringable doorbells, and the queues left for the next round. */
export interface DoorbellsRead {
  readonly doorbells: ReadonlyMap<string, readonly DoorbellRow[]>;
  readonly unread: readonly string[];
}

const keyOf = (d: DoorbellRow) => `${d.connectionId}:${d.token}`;

/** What a read needs of the ringer's connection: a statement on it, and who it is (read only when a row needs it). */
export interface RingerConnection {
  readonly on: RunOn;
  identity(): Promise<SessionIdentity>;
}

/**
 * A ringer's copy of each queue's doorbells, valid for the connection it was read over (clear()
 * when that connection goes: another may reach another server life). Rows seen asleep stay
 * ringable until a round finds them gone; new rows are verified in the process list first. At
 * most CACHED_QUEUES queues and CACHED_DOORBELLS doorbells, the least recently read going first.
 */
export class DoorbellCache {
  /** In the order last read: the first entries are the first to go. */
  readonly #cache = new Map<string, CachedDoorbells>();
  /** The doorbells held in all copies. */
  #held = 0;

  constructor(
    private readonly tables: Tables,
    /** Told when rows of another database user were read (they are left to polling). */
    private readonly onOtherUser: () => void,
  ) {}

  /** Queues whose copy is kept. */
  get size(): number {
    return this.#cache.size;
  }

  /** True when the copy of `queue` is fresh and holds no doorbell that can be rung from here. */
  knownSilent(queue: string): boolean {
    const cached = this.#cache.get(queue);
    return cached !== undefined && fresh(cached) && cached.parked.length === 0;
  }

  clear(): void {
    this.#cache.clear();
    this.#held = 0;
  }

  /** Drops the doorbells a round found gone or out of reach from every queue's copy. */
  drop(doorbells: readonly DoorbellRow[]): void {
    if (doorbells.length === 0) return;
    const dropped = new Set(doorbells.map(keyOf));
    for (const cached of this.#cache.values()) {
      const before = cached.parked.length;
      cached.parked = cached.parked.filter((d) => !dropped.has(keyOf(d)));
      this.#held -= before - cached.parked.length;
    }
  }

  /**
   * The doorbells of `queues`, each queue's read at most once per DOORBELL_CACHE_MS
   * (NO_DOORBELL_CACHE_MS while none can be rung): the stale ones QUEUES_PER_READ to a statement,
   * at most ROWS_PER_READ rows and READS_PER_ROUND statements; the queues past that are `unread`.
   * Rows seen before keep what was seen of them; new ones (a worker started or reconnected) are
   * looked for in the process list, one read per statement of rows. Rows whose connection has
   * closed are deleted; rows of another database user are left to polling. Queues without rows
   * cost their share of one read: who the connection is, is asked only once a row needs comparing
   * with it.
   */
  async read(queues: Iterable<string>, connection: RingerConnection): Promise<DoorbellsRead> {
    const doorbells = new Map<string, readonly DoorbellRow[]>();
    const stale: string[] = [];
    for (const queue of queues) {
      const cached = this.#cache.get(queue);
      if (cached && fresh(cached)) doorbells.set(queue, cached.parked);
      else stale.push(queue);
    }
    stale.sort(binaryOrder);
    let next = 0;
    for (let reads = 0; reads < READS_PER_ROUND && next < stale.length; reads++) {
      next += await this.#readSome(stale.slice(next, next + QUEUES_PER_READ), connection, doorbells);
    }
    return { doorbells, unread: stale.slice(next) };
  }

  /** Deletes the rows of registrations whose connection is gone: one statement, as many as a read returned. */
  async forget(gone: readonly DoorbellRow[], on: RunOn): Promise<void> {
    if (gone.length === 0) return;
    await on(sqlForgetGone(this.tables), [
      [...new Set(gone.map((d) => d.workerId))],
      [...new Set(gone.map((d) => d.token))],
    ]);
  }

  /**
   * One read of the doorbells of `queues` (in binary order). Returns how many of them it covered:
   * all, unless ROWS_PER_READ cut it short: then those up to the last row's queue (which keeps
   * the rows read of it).
   */
  async #readSome(
    queues: readonly string[],
    connection: RingerConnection,
    into: Map<string, readonly DoorbellRow[]>,
  ): Promise<number> {
    const [rows] = (await connection.on(sqlDoorbells(this.tables), [queues, ROWS_PER_READ])) as [
      Record<string, unknown>[],
    ];
    const last = rows.length >= ROWS_PER_READ ? String(rows.at(-1)?.queue) : null;
    const cut = last === null ? -1 : queues.findIndex((q) => binaryOrder(q, last) > 0);
    const covered = cut === -1 ? queues.length : Math.max(1, cut);
    const found = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const queue = String(row.queue);
      const list = found.get(queue) ?? [];
      found.set(queue, list);
      if (list.length < DOORBELLS_PER_QUEUE) list.push(row);
    }
    const read = queues.slice(0, covered);
    const parked = rows.length === 0 ? new Map<string, DoorbellRow[]>() : await this.#verify(read, found, connection);
    const readAt = performance.now();
    for (const queue of read) {
      const entry = { parked: parked.get(queue) ?? [], readAt };
      this.#store(queue, entry);
      into.set(queue, entry.parked);
    }
    return covered;
  }

  /** Keeps `queue`'s copy as the most recently read, and lets the least recently read go past the bounds. */
  #store(queue: string, entry: CachedDoorbells): void {
    const before = this.#cache.get(queue);
    if (before) {
      this.#held -= before.parked.length;
      this.#cache.delete(queue);
    }
    this.#cache.set(queue, entry);
    this.#held += entry.parked.length;
    for (const [oldest, cached] of this.#cache) {
      if (this.#cache.size <= CACHED_QUEUES && this.#held <= CACHED_DOORBELLS) break;
      this.#cache.delete(oldest);
      this.#held -= cached.parked.length;
    }
  }

  /**
   * The rows read that can be rung from this connection, by queue: those seen asleep before (in
   * that queue's copy), and the new ones found asleep now, one read of the process list for all.
   */
  async #verify(
    queues: readonly string[],
    found: ReadonlyMap<string, readonly Record<string, unknown>[]>,
    connection: RingerConnection,
  ): Promise<Map<string, DoorbellRow[]>> {
    const self = await connection.identity();
    const byQueue = new Map<string, { seen: DoorbellRow[]; fresh: DoorbellRow[] }>();
    let otherUser = false;
    for (const queue of queues) {
      const rows = (found.get(queue) ?? []).map(doorbellOf);
      if (rows.length === 0) continue;
      otherUser ||= rows.some((d) => d.server === self.server && d.user !== self.user && isToken(d.token));
      const seen = new Set(this.#cache.get(queue)?.parked.map(keyOf));
      const ringable = rows.filter((d) => ringableFrom(d, self));
      byQueue.set(queue, {
        seen: ringable.filter((d) => seen.has(keyOf(d))),
        fresh: ringable.filter((d) => !seen.has(keyOf(d))),
      });
    }
    if (otherUser) this.onOtherUser();
    const { parked, gone } = await findParked(
      connection.on,
      self,
      [...byQueue.values()].flatMap((q) => q.fresh),
    );
    await this.forget(gone, connection.on);
    const asleep = new Set(parked.map(keyOf));
    const result = new Map<string, DoorbellRow[]>();
    for (const [queue, q] of byQueue) result.set(queue, [...q.seen, ...q.fresh.filter((d) => asleep.has(keyOf(d)))]);
    return result;
  }
}

function doorbellOf(r: Record<string, unknown>): DoorbellRow {
  return {
    workerId: String(r.worker_id),
    server: String(r.server),
    connectionId: Number(r.connection_id),
    token: String(r.token),
    user: String(r.db_user),
  };
}

/** Doorbells a ring from `self` may reach: its server, its user, a token, another process, not itself. */
function ringableFrom(d: DoorbellRow, self: SessionIdentity): boolean {
  return (
    d.server === self.server &&
    d.user === self.user &&
    isToken(d.token) &&
    d.connectionId !== self.id &&
    !isLocalWorker(d.workerId)
  );
}

function fresh(cached: CachedDoorbells): boolean {
  const ttl = cached.parked.length === 0 ? NO_DOORBELL_CACHE_MS : DOORBELL_CACHE_MS;
  return performance.now() - cached.readAt < ttl;
}
