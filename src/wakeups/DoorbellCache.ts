import { binaryOrder } from '../db/binaryOrder.ts';
import type { Tables } from '../db/tables.ts';
import type { RunOn } from './parkedSleep.ts';
import { PATTERN_KEY_FROM, PATTERN_KEY_TO, patternKeyMatches } from './patternDoorbells.ts';
import {
  type DoorbellRow,
  forgetGone,
  type RingerConnection,
  sleepOf,
  type VerifyingCache,
  verifyDoorbells,
} from './verifyDoorbells.ts';

const COLUMNS = 'queue, worker_id, server, connection_id, token, db_user';

/**
 * Params: ?1 queues (list, at most QUEUES_PER_READ), ?2 limit (ROWS_PER_READ). The doorbells of
 * those queues in primary-key order: one range of the primary key per queue, at most `limit` rows
 * in all (rows past it are not read: the caller reads the queues after the last row's again).
 */
const sqlQueueDoorbells = (t: Tables) => `
SELECT ${COLUMNS}
FROM ${t.doorbells}
WHERE queue IN (?)
ORDER BY queue, worker_id
LIMIT ?`;

/**
 * Params: ?1 from, ?2 to (PATTERN_KEY_FROM, PATTERN_KEY_TO), ?3 limit (DOORBELLS_PER_QUEUE). The
 * doorbells of workers on patterns (patternDoorbells.ts): one range of the primary key.
 */
const sqlPatternDoorbells = (t: Tables) => `
SELECT ${COLUMNS}
FROM ${t.doorbells}
WHERE queue >= ? AND queue < ?
ORDER BY queue, worker_id
LIMIT ?`;

/** Params: those of sqlQueueDoorbells, then sqlPatternDoorbells'. Both reads in one statement. */
const sqlBothDoorbells = (t: Tables) => `
SELECT ${COLUMNS}
FROM ((${sqlQueueDoorbells(t)})
  UNION ALL
  (${sqlPatternDoorbells(t)})) d`;

/** The copy of every pattern's doorbells: a key no queue name can take. */
const PATTERNS = PATTERN_KEY_FROM;

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
  readonly #verifying: VerifyingCache;

  constructor(
    private readonly tables: Tables,
    /** Told when rows of another database user were read (they are left to polling). */
    onOtherUser: () => void,
  ) {
    this.#verifying = { tables, seen: (key) => this.#cache.get(key)?.parked, onOtherUser };
  }

  /** Queues whose copy is kept. */
  get size(): number {
    return this.#cache.size;
  }

  /**
   * True when the copies of `queue` and of the patterns are fresh and neither holds a doorbell of
   * it that can be rung from here.
   */
  knownSilent(queue: string): boolean {
    const cached = this.#cache.get(queue);
    const patterns = this.#cache.get(PATTERNS);
    return (
      cached !== undefined &&
      fresh(cached) &&
      cached.parked.length === 0 &&
      patterns !== undefined &&
      fresh(patterns) &&
      !patterns.parked.some((d) => patternKeyMatches(d.key, queue))
    );
  }

  clear(): void {
    this.#cache.clear();
    this.#held = 0;
  }

  /** Drops the doorbells a round found gone or out of reach from every queue's copy. */
  drop(doorbells: readonly DoorbellRow[]): void {
    if (doorbells.length === 0) return;
    const dropped = new Set(doorbells.map(sleepOf));
    for (const cached of this.#cache.values()) {
      const before = cached.parked.length;
      cached.parked = cached.parked.filter((d) => !dropped.has(sleepOf(d)));
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
   * with it. Each queue's doorbells include those of the workers on a pattern that covers it: every
   * pattern's rows are read in one more statement, kept as a queue's are (at most
   * DOORBELLS_PER_QUEUE of them: past that, workers on patterns are left to polling).
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
    // The patterns' copy, when stale, is read in the round's first statement (or one of its own).
    let patternsRead = this.#fresh(PATTERNS);
    let next = 0;
    for (let reads = 0; reads < READS_PER_ROUND && next < stale.length; reads++) {
      next += await this.#readSome(stale.slice(next, next + QUEUES_PER_READ), connection, doorbells, !patternsRead);
      patternsRead = true;
    }
    if (!patternsRead) await this.#readSome([], connection, doorbells, true);
    const patterns = this.#cache.get(PATTERNS)?.parked ?? [];
    if (patterns.length > 0)
      for (const [queue, own] of doorbells) {
        const covering = patterns.filter((d) => patternKeyMatches(d.key, queue));
        if (covering.length > 0) doorbells.set(queue, [...own, ...covering]);
      }
    return { doorbells, unread: stale.slice(next) };
  }

  #fresh(key: string): boolean {
    const cached = this.#cache.get(key);
    return cached !== undefined && fresh(cached);
  }

  /** Deletes the rows of registrations whose connection is gone: one statement, as many as a read returned. */
  forget(gone: readonly DoorbellRow[], on: RunOn): Promise<void> {
    return forgetGone(this.tables, gone, on);
  }

  /**
   * One read of the doorbells of `queues` (in binary order), and of the patterns' if `patterns`.
   * Returns how many of the queues it covered: all, unless ROWS_PER_READ cut it short: then those
   * up to the last row's queue (which keeps the rows read of it).
   */
  async #readSome(
    queues: readonly string[],
    connection: RingerConnection,
    into: Map<string, readonly DoorbellRow[]>,
    patterns: boolean,
  ): Promise<number> {
    const patternParams = [PATTERN_KEY_FROM, PATTERN_KEY_TO, DOORBELLS_PER_QUEUE];
    const [read] = (await (queues.length === 0
      ? connection.on(sqlPatternDoorbells(this.tables), patternParams)
      : patterns
        ? connection.on(sqlBothDoorbells(this.tables), [queues, ROWS_PER_READ, ...patternParams])
        : connection.on(sqlQueueDoorbells(this.tables), [queues, ROWS_PER_READ]))) as [Record<string, unknown>[]];
    const rows = read.filter((r) => !String(r.queue).startsWith(PATTERNS));
    // The last queue the read reached (a derived table keeps no order: the greatest).
    const last =
      rows.length >= ROWS_PER_READ
        ? rows.map((r) => String(r.queue)).reduce((a, b) => (binaryOrder(a, b) >= 0 ? a : b))
        : null;
    const cut = last === null ? -1 : queues.findIndex((q) => binaryOrder(q, last) > 0);
    const covered = cut === -1 ? queues.length : Math.max(1, cut);
    const found = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const queue = String(row.queue);
      const list = found.get(queue) ?? [];
      found.set(queue, list);
      if (list.length < DOORBELLS_PER_QUEUE) list.push(row);
    }
    if (patterns)
      found.set(
        PATTERNS,
        read.filter((r) => String(r.queue).startsWith(PATTERNS)),
      );
    const covering = queues.slice(0, covered);
    const keys = patterns ? [...covering, PATTERNS] : covering;
    const parked =
      read.length === 0
        ? new Map<string, DoorbellRow[]>()
        : await verifyDoorbells(keys, found, connection, this.#verifying);
    const readAt = performance.now();
    for (const queue of keys) {
      const entry = { parked: parked.get(queue) ?? [], readAt };
      this.#store(queue, entry);
      if (queue !== PATTERNS) into.set(queue, entry.parked);
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
}

function fresh(cached: CachedDoorbells): boolean {
  const ttl = cached.parked.length === 0 ? NO_DOORBELL_CACHE_MS : DOORBELL_CACHE_MS;
  return performance.now() - cached.readAt < ttl;
}
