import type { Knex } from 'knex';
import { ER } from '../db/mysqlErrors.ts';
import { queryOnConnection } from '../db/queryOnConnection.ts';
import type { Tables } from '../db/tables.ts';
import { DoorbellUnreachableError } from '../errors.ts';
import type { SluiceEvents } from '../events.ts';
import { DoorbellCache } from './DoorbellCache.ts';
import { ringLocal } from './localRing.ts';
import { type RunOn, readIdentity, type SessionIdentity } from './parkedSleep.ts';
import { ringParked } from './ringParked.ts';
import type { RingerConnection } from './verifyDoorbells.ts';

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
 * round: a steady stream of single enqueues costs a round per gap, not one per job. The doorbells
 * are read at most once per DOORBELL_CACHE_MS per queue (DoorbellCache: a read, never a write, so
 * no hot row on the enqueue path), up to QUEUES_PER_READ queues to a statement and READS_PER_ROUND
 * statements to a round, however many queues a commit wrote to (the rest go in the next round);
 * and a doorbell is rung only once this connection has seen it
 * asleep in the process list (parkedSleep.ts), one read for all the new ones: after that, a ring
 * is one KILL, as cheap as before verification. A queue nobody waits on costs its share of one read per
 * NO_DOORBELL_CACHE_MS. A failure is reported and costs only latency: the workers' polling is the
 * backstop.
 */
export class Ringer {
  readonly #pending = new Map<string, number>();
  /** When each queue's last round ended (performance.now()), for RING_GAP_MS. */
  readonly #lastRound = new Map<string, number>();
  readonly #doorbells: DoorbellCache;
  #flushing: Promise<void> | null = null;
  /** The connection held between rings, and who it is on its server once a doorbell row asked (DoorbellCache). */
  #connection: { raw: unknown; self: Promise<SessionIdentity> | null } | null = null;
  /** Doorbells this ringer leaves to polling, reported once each kind (a fixed set of keys). */
  readonly #reported = new Set<'other-user' | 'denied'>();

  constructor(private readonly options: RingerOptions) {
    this.#doorbells = new DoorbellCache(options.tables, () => this.#reportOnce('other-user'));
  }

  /** Queues whose doorbells this ringer keeps a copy of (at most CACHED_QUEUES). */
  get cachedQueues(): number {
    return this.#doorbells.size;
  }

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
    for (const queue of queues.keys()) if (!this.#doorbells.knownSilent(queue)) return false;
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

  async #ringRemote(queues: ReadonlyMap<string, number>): Promise<void> {
    const connection = this.#acquire();
    const { doorbells, unread } = await this.#doorbells.read(queues.keys(), connection);
    // Past the round's reads: rung in the next round.
    for (const queue of unread) this.#pending.set(queue, (this.#pending.get(queue) ?? 0) + (queues.get(queue) ?? 0));
    const rings = [];
    for (const [queue, parked] of doorbells) {
      if (parked.length > 0) rings.push({ jobs: queues.get(queue) ?? 0, parked: pickRandom(parked, parked.length) });
    }
    if (rings.length === 0) return;
    const { gone, denied } = await ringParked(connection.on, rings);
    if (denied.length > 0) this.#reportOnce('denied');
    this.#doorbells.drop([...gone, ...denied]);
    await this.#doorbells.forget(gone, connection.on);
  }

  /**
   * The ringer's connection (acquired at its first statement, held between rings) as the doorbells
   * need it: statements straight to mysql2 (queryOnConnection) and who it is, read once, the first
   * time a doorbell row is compared with it. Nothing of sluice's ends a statement of ours; a DBA,
   * or an earlier sluice's ringer that trusts a row naming our connection, might: such a 1317
   * costs one retry, never the round.
   */
  #acquire(): RingerConnection {
    const knex = this.options.knex as Knex;
    const raw = async (): Promise<unknown> => {
      if (this.#connection) return this.#connection.raw;
      const acquired = await knex.client.acquireConnection();
      this.#connection = { raw: acquired, self: null };
      return acquired;
    };
    const on: RunOn = async (sql, params = []) => {
      const connection = await raw();
      return queryOnConnection(knex, connection, sql, params).catch((error: { errno?: number }) => {
        if (error.errno !== ER.QUERY_INTERRUPTED) throw error;
        return queryOnConnection(knex, connection, sql, params);
      });
    };
    const identity = async (): Promise<SessionIdentity> => {
      await raw();
      const held = this.#connection as { self: Promise<SessionIdentity> | null };
      held.self ??= readIdentity(on);
      return held.self;
    };
    return { on, identity };
  }

  /** Gives the connection back, and with it what was seen over it: another connection may reach another server life. */
  async #release(broken = false): Promise<void> {
    const connection = this.#connection;
    this.#connection = null;
    this.#doorbells.clear();
    if (!connection || !this.options.knex) return;
    if (broken) (connection.raw as { __knex__disposed?: unknown }).__knex__disposed = true;
    await this.options.knex.client.releaseConnection(connection.raw).catch(() => undefined);
  }
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
