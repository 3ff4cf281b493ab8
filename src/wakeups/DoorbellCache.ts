import type { Tables } from '../db/tables.ts';
import { isLocalWorker } from './localRing.ts';
import { findParked, isToken, type RunOn, type SessionIdentity } from './parkedSleep.ts';

/** Params: ?1 queue, ?2 limit. The doorbells of a queue: a primary-key range read, at most `limit` rows. */
const sqlDoorbells = (t: Tables) => `
SELECT worker_id, server, connection_id, token, db_user
FROM ${t.doorbells}
WHERE queue = ?
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
 * Rows read per queue. What a round costs is bounded by this, not by what the table holds (rows
 * left by crashed workers until maintenance removes them, or rows written by anyone who may
 * INSERT). A queue with more idle workers than this: the others are woken by their polls.
 */
export const DOORBELLS_PER_QUEUE = 256;

export interface DoorbellRow {
  readonly workerId: string;
  readonly server: string;
  readonly connectionId: number;
  readonly token: string;
  readonly user: string;
}

/** Those of a queue's doorbells, as last read, that were seen asleep over the ringer's connection. */
export interface CachedDoorbells {
  parked: DoorbellRow[];
  readonly readAt: number;
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
 * ringable until a round finds them gone; new rows are verified in the process list first.
 */
export class DoorbellCache {
  readonly #cache = new Map<string, CachedDoorbells>();

  constructor(
    private readonly tables: Tables,
    /** Told when rows of another database user were read (they are left to polling). */
    private readonly onOtherUser: () => void,
  ) {}

  /** True when the copy of `queue` is fresh and holds no doorbell that can be rung from here. */
  knownSilent(queue: string): boolean {
    const cached = this.#cache.get(queue);
    return cached !== undefined && fresh(cached) && cached.parked.length === 0;
  }

  clear(): void {
    this.#cache.clear();
  }

  /** Drops the doorbells a round found gone or out of reach from every queue's copy. */
  drop(doorbells: readonly DoorbellRow[]): void {
    if (doorbells.length === 0) return;
    const dropped = new Set(doorbells.map(keyOf));
    for (const cached of this.#cache.values()) cached.parked = cached.parked.filter((d) => !dropped.has(keyOf(d)));
  }

  /**
   * The queue's doorbells, read at most once per DOORBELL_CACHE_MS (NO_DOORBELL_CACHE_MS while
   * none can be rung), and those seen asleep over this connection: rows seen before keep that, new
   * ones (a worker started or reconnected) are looked for in the process list, one read for all.
   * Rows whose connection has closed are deleted; rows of another database user are left to
   * polling. A queue without rows costs its one read: who the connection is, is asked only once a
   * row needs comparing with it.
   */
  async read(queue: string, connection: RingerConnection): Promise<CachedDoorbells> {
    const cached = this.#cache.get(queue);
    if (cached && fresh(cached)) return cached;
    const [found] = (await connection.on(sqlDoorbells(this.tables), [queue, DOORBELLS_PER_QUEUE])) as [
      Record<string, unknown>[],
    ];
    const entry = {
      parked: found.length === 0 ? [] : await this.#verify(found, cached, connection),
      readAt: performance.now(),
    };
    this.#cache.set(queue, entry);
    return entry;
  }

  /** Deletes the rows of registrations whose connection is gone: one statement, as many as a round read. */
  async forget(gone: readonly DoorbellRow[], on: RunOn): Promise<void> {
    if (gone.length === 0) return;
    await on(sqlForgetGone(this.tables), [
      [...new Set(gone.map((d) => d.workerId))],
      [...new Set(gone.map((d) => d.token))],
    ]);
  }

  /** The rows read that can be rung from this connection: those seen asleep before, and the new ones found asleep now. */
  async #verify(
    found: readonly Record<string, unknown>[],
    cached: CachedDoorbells | undefined,
    connection: RingerConnection,
  ): Promise<DoorbellRow[]> {
    const self = await connection.identity();
    const rows = found.map((r) => ({
      workerId: String(r.worker_id),
      server: String(r.server),
      connectionId: Number(r.connection_id),
      token: String(r.token),
      user: String(r.db_user),
    }));
    if (rows.some((d) => d.server === self.server && d.user !== self.user && isToken(d.token))) this.onOtherUser();
    const seen = new Set(cached?.parked.map(keyOf));
    const ringable = rows.filter((d) => ringableFrom(d, self));
    const { parked, gone } = await findParked(
      connection.on,
      self,
      ringable.filter((d) => !seen.has(keyOf(d))),
    );
    await this.forget(gone, connection.on);
    return [...ringable.filter((d) => seen.has(keyOf(d))), ...parked];
  }
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
