import type { Knex } from 'knex';
import { executePrepared, type PreparedWrite, type PreparingConnection } from './executePrepared.ts';
import { type WriteResult, withoutSql } from './executor.ts';
import { retryTransient } from './retryTransient.ts';
import { writeOnPool } from './writeOnPool.ts';

/**
 * How long the lane keeps its connection after the last write, roughly: a check every this long
 * (scaled by a random factor in [0.75, 1.25), so that the processes of a fleet do not check in
 * step) hands it back once no write came since the previous check.
 */
export const LANE_IDLE_MS = 1_000;

/** A connection of knex's pool, as mysql2 made it, with the marks that say it is no longer usable. */
interface LaneConnection extends PreparingConnection {
  _fatalError?: unknown;
  _protocolError?: unknown;
  _closing?: boolean;
  stream?: { destroyed?: boolean };
  __knex__disposed?: unknown;
}

/** The part of tarn's pool the lane watches: who else waits on it, and when it goes. */
interface WatchedPool {
  numPendingAcquires(): number;
  on(event: 'acquireRequest' | 'poolDestroyRequest', listener: () => void): void;
}

interface LaneClient {
  readonly pool?: WatchedPool;
  acquireConnection(): Promise<LaneConnection>;
  releaseConnection(connection: LaneConnection): Promise<void>;
}

/**
 * The single enqueue's way to its autocommit INSERT, prepared (executePrepared): one connection of
 * knex's pool kept between writes while they come one at a time. A connection taken from tarn and
 * given back costs two timers, a validation and half a dozen promises per statement; with eight
 * enqueuing processes on two cores that was a fifth of a single enqueue's client CPU. Past knex's query builder as
 * writeOnPool is, with the same retry of transient conflicts and the same 'query' event.
 *
 * The pool stays the owner, and is never starved:
 * - a write that finds the connection busy (calls that overlap) goes through the pool (writeOnPool);
 * - anyone else asking the pool gets the connection: at once when it is idle (tarn's acquireRequest,
 *   before the request is queued), or at the end of the write under way when the pool has acquires
 *   waiting;
 * - it goes back once writes stop (LANE_IDLE_MS, one jittered check per period, none per write), when
 *   the pool is being destroyed, and on close();
 * - a connection that failed (mysql2's fatal or protocol error, knex's disposed mark) goes back
 *   marked disposed, so that the pool destroys it rather than lend it again, and is never reused.
 */
export class SingleWriteLane {
  readonly #knex: Knex;
  #connection: LaneConnection | null = null;
  /** A write is on the held connection, or the connection is being taken. */
  #busy = false;
  /** True while the lane's own acquire is in tarn's hands (its acquireRequest is not someone else's). */
  #taking = false;
  #closed = false;
  #watched: WatchedPool | null = null;
  /** Writes on the held connection since the idle check last looked. */
  #writes = 0;
  #idleCheck: NodeJS.Timeout | null = null;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  /** One autocommit write, prepared; transient conflicts re-run it. */
  write(statement: PreparedWrite): Promise<WriteResult> {
    return retryTransient(() => this.#writeOnce(statement));
  }

  /** Gives the connection back now, or after the write under way; later writes go through the pool. */
  close(): void {
    this.#closed = true;
    if (!this.#busy) this.#handBack();
  }

  #writeOnce(statement: PreparedWrite): Promise<WriteResult> {
    if (this.#busy || this.#closed) return writeOnPool(this.#knex, statement);
    const held = this.#connection;
    if (held !== null && !isBroken(held)) return this.#send(held, statement);
    if (held !== null) this.#handBack();
    return this.#take().then((connection) => this.#send(connection, statement));
  }

  /** A connection from the pool, kept: the lane is busy from here until its first write ends. */
  async #take(): Promise<LaneConnection> {
    const client = this.#knex.client as unknown as LaneClient;
    this.#watch(client.pool);
    this.#busy = true;
    this.#taking = true;
    let acquiring: Promise<LaneConnection>;
    try {
      // tarn announces the request synchronously, inside this call.
      acquiring = client.acquireConnection();
    } finally {
      this.#taking = false;
    }
    try {
      this.#connection = await acquiring;
    } catch (error) {
      this.#busy = false;
      throw error;
    }
    this.#armIdleCheck();
    return this.#connection;
  }

  #send(connection: LaneConnection, statement: PreparedWrite): Promise<WriteResult> {
    this.#busy = true;
    this.#writes++;
    if (this.#knex.listenerCount('query') > 0)
      this.#knex.emit('query', { sql: statement.sql, bindings: statement.values });
    return new Promise<WriteResult>((resolve, reject) => {
      try {
        executePrepared(connection, statement, (error, result) => {
          this.#busy = false;
          if (isBroken(connection) || this.#closed || this.#othersWaiting()) this.#handBack();
          if (error) reject(withoutSql(error));
          else resolve({ affectedRows: result.affectedRows, insertId: Number(result.insertId) });
        });
      } catch (error) {
        this.#busy = false;
        this.#handBack();
        reject(error);
      }
    });
  }

  /** Subscribes once to the pool's requests and its destruction (knex may build a new pool: then to that one). */
  #watch(pool: WatchedPool | undefined): void {
    if (pool === undefined || pool === this.#watched) return;
    this.#watched = pool;
    pool.on('acquireRequest', () => {
      if (!this.#taking && !this.#busy && this.#watched === pool) this.#handBack();
    });
    pool.on('poolDestroyRequest', () => {
      if (this.#watched !== pool) return;
      this.#watched = null;
      if (!this.#busy) this.#handBack();
    });
  }

  #othersWaiting(): boolean {
    const pool = this.#watched;
    return pool === null || pool.numPendingAcquires() > 0;
  }

  #armIdleCheck(): void {
    if (this.#idleCheck !== null) clearTimeout(this.#idleCheck);
    this.#writes = 0;
    this.#idleCheck = setTimeout(
      () => {
        this.#idleCheck = null;
        if (this.#connection === null) return;
        if (this.#writes === 0 && !this.#busy) this.#handBack();
        else this.#armIdleCheck();
      },
      LANE_IDLE_MS * (0.75 + Math.random() / 2),
    );
    this.#idleCheck.unref();
  }

  /** Returns the held connection to the pool (marked disposed if it failed: the pool destroys it). */
  #handBack(): void {
    const connection = this.#connection;
    if (connection === null) return;
    this.#connection = null;
    if (this.#idleCheck !== null) clearTimeout(this.#idleCheck);
    this.#idleCheck = null;
    if (isBroken(connection)) connection.__knex__disposed ??= connection._fatalError ?? new Error('connection failed');
    const client = this.#knex.client as unknown as LaneClient;
    client.releaseConnection(connection).catch(() => undefined);
  }
}

/** True when mysql2 or knex has given up on the connection (knex's own validation, done here before each reuse). */
function isBroken(connection: LaneConnection): boolean {
  return Boolean(
    connection.__knex__disposed ||
      connection._fatalError ||
      connection._protocolError ||
      connection._closing ||
      connection.stream?.destroyed,
  );
}
