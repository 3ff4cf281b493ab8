import type { Knex } from 'knex';
import { ER } from '../db/mysqlErrors.ts';
import type { Tables } from '../db/tables.ts';
import { DoorbellUnreachableError } from '../errors.ts';
import type { SluiceEvents } from '../events.ts';
import { isLocalWorker, ringLocal } from './localRing.ts';
import { findParked, isToken, type RunOn, readIdentity, type SessionIdentity } from './parkedSleep.ts';
import { ringParked } from './ringParked.ts';

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

/**
 * The shortest time from the end of a queue's round to the start of its next. The first ring after a quiet spell goes at
 * once (a lone job's pickup is as before); rings that come sooner are gathered into one round
 * when the gap is over, so a producer enqueueing job after job sends its queue's doorbells a round
 * per gap rather than one per job (each round is a KILL per doorbell rung, and each rung worker
 * runs an empty claim if another took the job). A job enqueued in a busy spell waits at most this
 * much longer for its ring (bench/README.md, single-job enqueue).
 */
export const RING_GAP_MS = 5;
/** Queues whose last round this ringer remembers; past it the memory starts afresh (a ring may then go early). */
const REMEMBERED_QUEUES = 1_024;

interface DoorbellRow {
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

const keyOf = (d: DoorbellRow) => `${d.connectionId}:${d.token}`;

export interface RingerOptions {
  /** A small pool of its own (one connection is enough), or null when sluice has no URL to open one. */
  readonly knex: Knex | null;
  readonly tables: Tables;
  readonly events: SluiceEvents;
}

/**
 * The enqueuer's side of the wake-up, called after a commit that wrote jobs: rings this process's
 * workers of those queues at once (localRing), and the doorbells of other processes' workers over
 * a connection of its own (ringParked.ts: a KILL per job written and one more, at most one per
 * doorbell; a batch wakes every worker of its queue, up to KILLS_PER_ROUND). Never on the
 * enqueue's own path: the enqueue has returned when the KILLs go out; rings that come while some
 * are being sent, or within RING_GAP_MS of their queue's last round, are gathered into the next
 * round: a steady stream of single enqueues costs a round per gap, not one per job. The doorbells are read at most once per DOORBELL_CACHE_MS per queue (a read,
 * never a write: no hot row on the enqueue path), and a doorbell is rung only once this
 * connection has seen it asleep in the process list (parkedSleep.ts), one read for all the new
 * ones: after that, a ring is one KILL, as cheap as before verification. A failure is reported
 * and costs only latency: the workers' polling is the backstop.
 */
export class Ringer {
  readonly #pending = new Map<string, number>();
  /** When each queue's last round ended (performance.now()), for RING_GAP_MS. */
  readonly #lastRound = new Map<string, number>();
  readonly #cache = new Map<string, CachedDoorbells>();
  #flushing: Promise<void> | null = null;
  #connection: { raw: unknown; self: SessionIdentity } | null = null;
  /** Doorbells this ringer leaves to polling, reported once each kind (a fixed set of keys). */
  readonly #reported = new Set<'other-user' | 'denied'>();

  constructor(private readonly options: RingerOptions) {}

  /** Rings for `jobs` new jobs in each of `queues`. Returns at once. */
  ring(prefix: string, queues: ReadonlyMap<string, number>): void {
    ringLocal(prefix, queues.keys());
    if (!this.options.knex) return;
    // Nobody to ring (as far as a fresh copy of the doorbells says): not even a promise per enqueue.
    if (!this.#flushing && this.#allKnownSilent(queues)) return;
    for (const [queue, jobs] of queues) this.#pending.set(queue, (this.#pending.get(queue) ?? 0) + jobs);
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
  }

  /** True when the cached doorbells of every queue are fresh and none of them can be rung from here. */
  #allKnownSilent(queues: ReadonlyMap<string, number>): boolean {
    if (!this.#connection) return false;
    for (const queue of queues.keys()) {
      const cached = this.#cache.get(queue);
      if (!cached || !fresh(cached) || cached.parked.length > 0) return false;
    }
    return true;
  }

  /** Waits for the rings under way (close() calls it before the pools go). */
  async settled(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async close(): Promise<void> {
    await this.settled();
    await this.#release();
  }

  async #flush(): Promise<void> {
    while (this.#pending.size > 0) {
      const batch = await this.#due(performance.now());
      if (batch === null) continue;
      try {
        await this.#ringRemote(batch);
      } catch (error) {
        await this.#release(true);
        this.#report(error, 'ringing after an enqueue');
      }
      if (this.#lastRound.size >= REMEMBERED_QUEUES) this.#lastRound.clear();
      const endedAt = performance.now();
      for (const queue of batch.keys()) this.#lastRound.set(queue, endedAt);
    }
  }

  /**
   * The pending rings whose queue's gap is over, taken out of the pending ones; or, when none is,
   * null once the first of them is (rings that come meanwhile join the wait).
   */
  async #due(now: number): Promise<Map<string, number> | null> {
    const due = new Map<string, number>();
    let waitMs = Number.POSITIVE_INFINITY;
    for (const [queue, jobs] of this.#pending) {
      const sinceMs = now - (this.#lastRound.get(queue) ?? Number.NEGATIVE_INFINITY);
      if (sinceMs >= RING_GAP_MS) due.set(queue, jobs);
      else waitMs = Math.min(waitMs, RING_GAP_MS - sinceMs);
    }
    if (due.size === 0) {
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(waitMs)));
      return null;
    }
    for (const queue of due.keys()) this.#pending.delete(queue);
    return due;
  }

  #report(error: unknown, context: string): void {
    this.options.events.emit('doorbell:error', {
      error: error instanceof Error ? error : new Error(String(error)),
      context,
    });
  }

  #reportOnce(kind: 'other-user' | 'denied'): void {
    if (this.#reported.has(kind)) return;
    this.#reported.add(kind);
    this.#report(
      new DoorbellUnreachableError(
        'workers connected as another database user are not rung by this one (it may neither see nor end their ' +
          'statements): they start its jobs at their next poll. Run workers and enqueuers as the same database user ' +
          'for wake-ups within milliseconds, or leave it to polling.',
      ),
      'ringing workers of another database user',
    );
  }

  /** Doorbells a ring from `self` may reach: its server, its user, a token, another process, not itself. */
  #ringable(d: DoorbellRow, self: SessionIdentity): boolean {
    return (
      d.server === self.server &&
      d.user === self.user &&
      isToken(d.token) &&
      d.connectionId !== self.id &&
      !isLocalWorker(d.workerId)
    );
  }

  async #ringRemote(queues: ReadonlyMap<string, number>): Promise<void> {
    const { raw, self } = await this.#acquire();
    const knex = this.options.knex as Knex;
    // Nothing of sluice's ends a statement of ours; a DBA, or an earlier sluice's ringer that
    // trusts a row naming our connection, might: such a 1317 costs one retry, never the round.
    const on: RunOn = (sql, params = []) =>
      knex
        .raw(sql, params as Knex.RawBinding[])
        .connection(raw)
        .catch((error: { errno?: number }) => {
          if (error.errno !== ER.QUERY_INTERRUPTED) throw error;
          return knex.raw(sql, params as Knex.RawBinding[]).connection(raw);
        });
    const rings = [];
    for (const [queue, jobs] of queues) {
      const cached = await this.#doorbells(queue, on, self);
      rings.push({ jobs, parked: pickRandom(cached.parked, cached.parked.length) });
    }
    const { gone, denied } = await ringParked(on, rings);
    if (denied.length > 0) this.#reportOnce('denied');
    const dropped = new Set([...gone, ...denied].map(keyOf));
    for (const cached of this.#cache.values()) cached.parked = cached.parked.filter((d) => !dropped.has(keyOf(d)));
    await this.#forget(gone, on);
  }

  /** Deletes the rows of registrations whose connection is gone: one statement, as many as a round read. */
  async #forget(gone: readonly DoorbellRow[], on: RunOn): Promise<void> {
    if (gone.length === 0) return;
    await on(sqlForgetGone(this.options.tables), [
      [...new Set(gone.map((d) => d.workerId))],
      [...new Set(gone.map((d) => d.token))],
    ]);
  }

  /**
   * The queue's doorbells, read at most once per DOORBELL_CACHE_MS (NO_DOORBELL_CACHE_MS while
   * none can be rung), and those seen asleep over this connection: rows seen before keep that, new
   * ones (a worker started or reconnected) are looked for in the process list, one read for all.
   * Rows whose connection has closed are deleted; rows of another database user are left to
   * polling (reported once).
   */
  async #doorbells(queue: string, on: RunOn, self: SessionIdentity): Promise<CachedDoorbells> {
    const cached = this.#cache.get(queue);
    if (cached && fresh(cached)) return cached;
    const [found] = (await on(sqlDoorbells(this.options.tables), [queue, DOORBELLS_PER_QUEUE])) as [
      Record<string, unknown>[],
    ];
    const rows = found.map((r) => ({
      workerId: String(r.worker_id),
      server: String(r.server),
      connectionId: Number(r.connection_id),
      token: String(r.token),
      user: String(r.db_user),
    }));
    if (rows.some((d) => d.server === self.server && d.user !== self.user && isToken(d.token)))
      this.#reportOnce('other-user');
    const seen = new Set(cached?.parked.map(keyOf));
    const ringable = rows.filter((d) => this.#ringable(d, self));
    const { parked, gone } = await findParked(
      on,
      self,
      ringable.filter((d) => !seen.has(keyOf(d))),
    );
    await this.#forget(gone, on);
    const entry = {
      parked: [...ringable.filter((d) => seen.has(keyOf(d))), ...parked],
      readAt: performance.now(),
    };
    this.#cache.set(queue, entry);
    return entry;
  }

  /** The ringer's connection, held between rings, with who it is on its server. */
  async #acquire(): Promise<{ raw: unknown; self: SessionIdentity }> {
    if (this.#connection) return this.#connection;
    const knex = this.options.knex as Knex;
    const raw = await knex.client.acquireConnection();
    try {
      const self = await readIdentity((sql, params = []) => knex.raw(sql, params as Knex.RawBinding[]).connection(raw));
      this.#connection = { raw, self };
      return this.#connection;
    } catch (error) {
      await knex.client.releaseConnection(raw).catch(() => undefined);
      throw error;
    }
  }

  /** Gives the connection back, and with it what was seen over it: another connection may reach another server life. */
  async #release(broken = false): Promise<void> {
    const connection = this.#connection;
    this.#connection = null;
    this.#cache.clear();
    if (!connection || !this.options.knex) return;
    if (broken) (connection.raw as { __knex__disposed?: unknown }).__knex__disposed = true;
    await this.options.knex.client.releaseConnection(connection.raw).catch(() => undefined);
  }
}

function fresh(cached: CachedDoorbells): boolean {
  const ttl = cached.parked.length === 0 ? NO_DOORBELL_CACHE_MS : DOORBELL_CACHE_MS;
  return performance.now() - cached.readAt < ttl;
}

/** Pure: up to `count` distinct doorbells, at random (so that single jobs spread over the fleet). */
export function pickRandom<T>(items: readonly T[], count: number): T[] {
  const copy = [...items];
  const n = Math.max(0, Math.min(count, copy.length));
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}
