import type { Knex } from 'knex';
import { ER } from '../db/mysqlErrors.ts';
import type { Tables } from '../db/tables.ts';
import type { SluiceEvents } from '../events.ts';
import { isLocalWorker, ringLocal } from './localRing.ts';

/** Params: ?1 queues (list). The doorbells of these queues: a primary-key range read of a table of a few rows per worker. */
const sqlDoorbells = (t: Tables) => `
SELECT queue, worker_id, server, connection_id
FROM ${t.doorbells}
WHERE queue IN (?)`;

/** Params: none. The server this connection reaches: a KILL by connection id is sent only to the doorbell's own server. */
const sqlServer = `
SELECT CONCAT(@@hostname, ':', @@port) AS server`;

/** Params: ?1 connection id. Ends that doorbell's sleep (or does nothing if it is not asleep). */
const sqlKillQuery = `
KILL QUERY ?`;

/** Params: ?1 worker id, ?2 connection id. A doorbell whose connection is gone (its worker died). */
const sqlForgetStale = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id = ?
  AND connection_id = ?`;

/** How long an enqueuing process trusts its copy of a queue's doorbells (they change when workers start and stop). */
export const DOORBELL_CACHE_MS = 1_000;
/**
 * …and a copy that holds none: a worker that starts on an idle queue is rung within this long
 * (with the longer wait the first jobs after it started waited for its poll). One indexed read
 * per this period per queue while a queue has no worker.
 */
export const NO_DOORBELL_CACHE_MS = 100;

interface DoorbellRow {
  readonly workerId: string;
  readonly server: string;
  readonly connectionId: number;
}

export interface RingerOptions {
  /** A small pool of its own (one connection is enough), or null when sluice has no URL to open one. */
  readonly knex: Knex | null;
  readonly tables: Tables;
  readonly events: SluiceEvents;
}

/**
 * The enqueuer's side of the wake-up, called after a commit that wrote jobs: rings this process's
 * workers of those queues at once (localRing), and the doorbells of other processes' workers with
 * `KILL QUERY` over a connection to the same server (one KILL per job written, at most one per
 * doorbell; a batch wakes every worker of its queue). Never on the enqueue's own path: the
 * enqueue has returned when the KILLs go out; rings that come while some are being sent are
 * gathered into the next round, so a burst of enqueues costs a round or two, not one per job.
 * The doorbells are read at most once per DOORBELL_CACHE_MS per queue (a read, never a write:
 * no hot row on the enqueue path). A failure is reported and costs only latency: the workers'
 * polling is the backstop.
 */
export class Ringer {
  readonly #pending = new Map<string, number>();
  readonly #cache = new Map<string, { rows: DoorbellRow[]; readAt: number }>();
  #flushing: Promise<void> | null = null;
  #connection: { raw: unknown; server: string } | null = null;
  /** Doorbells this user may not ring (another user's, without CONNECTION ADMIN): reported once, then left to polling. */
  readonly #denied = new Set<number>();

  constructor(private readonly options: RingerOptions) {}

  /** Rings for `jobs` new jobs in each of `queues`. Returns at once. */
  ring(prefix: string, queues: ReadonlyMap<string, number>): void {
    ringLocal(prefix, queues.keys());
    if (!this.options.knex) return;
    // Nobody to ring (as far as a fresh copy of the doorbells says): not even a promise per enqueue.
    if (!this.#flushing && [...queues.keys()].every((queue) => this.#knownSilent(queue))) return;
    for (const [queue, jobs] of queues) this.#pending.set(queue, (this.#pending.get(queue) ?? 0) + jobs);
    this.#flushing ??= this.#flush().finally(() => {
      this.#flushing = null;
    });
  }

  /** True when the cached doorbells of `queue` are fresh and none of them can be rung from here. */
  #knownSilent(queue: string): boolean {
    const cached = this.#cache.get(queue);
    if (!cached || !fresh(cached)) return false;
    const server = this.#connection?.server;
    if (server === undefined) return false;
    return cached.rows.every(
      (d) => d.server !== server || isLocalWorker(d.workerId) || this.#denied.has(d.connectionId),
    );
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
      const batch = new Map(this.#pending);
      this.#pending.clear();
      try {
        await this.#ringRemote(batch);
      } catch (error) {
        await this.#release(true);
        this.#report(error, 'ringing after an enqueue');
      }
    }
  }

  #report(error: unknown, context: string): void {
    this.options.events.emit('doorbell:error', {
      error: error instanceof Error ? error : new Error(String(error)),
      context,
    });
  }

  async #ringRemote(queues: ReadonlyMap<string, number>): Promise<void> {
    const connection = await this.#acquire();
    const knex = this.options.knex as Knex;
    const on = (sql: string, params: readonly unknown[] = []) =>
      knex.raw(sql, params as Knex.RawBinding[]).connection(connection.raw);
    const rung = new Set<number>();
    for (const [queue, jobs] of queues) {
      const doorbells = (await this.#doorbells(queue, on)).filter(
        (d) =>
          d.server === connection.server &&
          !isLocalWorker(d.workerId) &&
          !rung.has(d.connectionId) &&
          !this.#denied.has(d.connectionId),
      );
      // In random order, until as many workers as jobs were woken: a doorbell that turns out gone
      // or forbidden passes the ring to the next one.
      let woken = 0;
      for (const doorbell of pickRandom(doorbells, doorbells.length)) {
        if (woken >= jobs) break;
        rung.add(doorbell.connectionId);
        try {
          await on(sqlKillQuery, [doorbell.connectionId]);
          woken++;
        } catch (error) {
          const errno = (error as { errno?: number }).errno;
          if (errno === ER.KILL_DENIED) {
            this.#denied.add(doorbell.connectionId);
            this.#report(
              error,
              `ringing worker ${doorbell.workerId} (another database user: grant CONNECTION ADMIN, or leave it to polling)`,
            );
            continue;
          }
          if (errno !== ER.NO_SUCH_THREAD) throw error;
          this.#cache.delete(queue);
          await on(sqlForgetStale(this.options.tables), [doorbell.workerId, doorbell.connectionId]);
        }
      }
    }
  }

  async #doorbells(
    queue: string,
    on: (sql: string, params?: readonly unknown[]) => Promise<unknown>,
  ): Promise<DoorbellRow[]> {
    const cached = this.#cache.get(queue);
    if (cached && fresh(cached)) return cached.rows;
    const [rows] = (await on(sqlDoorbells(this.options.tables), [[queue]])) as [Record<string, unknown>[]];
    const doorbells = rows.map((r) => ({
      workerId: String(r.worker_id),
      server: String(r.server),
      connectionId: Number(r.connection_id),
    }));
    this.#cache.set(queue, { rows: doorbells, readAt: performance.now() });
    return doorbells;
  }

  /** The ringer's connection, held between rings, with the server it reaches. */
  async #acquire(): Promise<{ raw: unknown; server: string }> {
    if (this.#connection) return this.#connection;
    const knex = this.options.knex as Knex;
    const raw = await knex.client.acquireConnection();
    try {
      const [[row]] = (await knex.raw(sqlServer).connection(raw)) as [{ server: string }[]];
      this.#connection = { raw, server: String(row?.server) };
      return this.#connection;
    } catch (error) {
      await knex.client.releaseConnection(raw).catch(() => undefined);
      throw error;
    }
  }

  async #release(broken = false): Promise<void> {
    const connection = this.#connection;
    this.#connection = null;
    if (!connection || !this.options.knex) return;
    if (broken) (connection.raw as { __knex__disposed?: unknown }).__knex__disposed = true;
    await this.options.knex.client.releaseConnection(connection.raw).catch(() => undefined);
  }
}

function fresh(cached: { rows: readonly DoorbellRow[]; readAt: number }): boolean {
  const ttl = cached.rows.length === 0 ? NO_DOORBELL_CACHE_MS : DOORBELL_CACHE_MS;
  return performance.now() - cached.readAt < ttl;
}

/** Pure: up to `count` distinct doorbells, at random (so that single jobs spread over the fleet). */
export function pickRandom<T>(items: readonly T[], count: number): T[] {
  const copy = [...items];
  const n = Math.min(count, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}
