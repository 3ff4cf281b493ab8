import type { Knex } from 'knex';
import { ER } from '../db/mysqlErrors.ts';
import type { Tables } from '../db/tables.ts';
import type { SluiceEvents } from '../events.ts';
import { findParked, killParked, newToken, type RunOn, readIdentity, sqlSleep } from './parkedSleep.ts';
import { doorbellKey } from './patternDoorbells.ts';

/**
 * Params: (?1 queue, ?2 worker id, ?3 token, ?4 database user) per queue. Run on the doorbell's
 * own connection, so that CONNECTION_ID() and the server name are that connection's.
 * Re-registering (after a reconnect) replaces the old connection id and token.
 */
const sqlRegister = (t: Tables, queues: number) => `
INSERT INTO ${t.doorbells} (queue, worker_id, server, connection_id, token, db_user, created_at)
VALUES ${Array.from({ length: queues }, () => "(?, ?, CONCAT(@@hostname, ':', @@port), CONNECTION_ID(), ?, ?, NOW(3))").join(',\n       ')}
ON DUPLICATE KEY UPDATE server = VALUES(server), connection_id = VALUES(connection_id), token = VALUES(token),
  db_user = VALUES(db_user), created_at = VALUES(created_at)`;

/** Params: ?1 worker id. A stopping worker's rings. */
const sqlForget = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id = ?`;

/** How long stop() waits for the sleep to end before it closes the connection under it. */
const STOP_WAIT_MS = 2_000;
/** After a failure of the doorbell's connection: wait about this long (jittered) before reconnecting. */
const RECONNECT_DELAY_MS = 2_000;

export interface DoorbellOptions {
  readonly knex: Knex;
  readonly tables: Tables;
  readonly events: SluiceEvents;
  readonly workerId: string;
  /** Queue names and patterns (a pattern's row: patternDoorbells.ts). */
  readonly queues: readonly string[];
  /** Called when the doorbell rings, and once after every (re)registration (jobs may have come meanwhile). */
  readonly onRing: () => void;
}

/**
 * A worker's doorbell, so that an enqueue in another process wakes it within milliseconds
 * (MySQL has no LISTEN/NOTIFY):
 *
 *   connect ──▶ register (rows, new token) ──▶ sleep ──(rung: KILL)──▶ onRing, sleep again
 *      ▲                                        │ (slept out: sleep again)
 *      └── failure: forget self, wait, reconnect ◀┘                 stop(): forget rows, end the sleep
 *
 * The connection is held for the worker's life (one server thread per worker, asleep). Whoever
 * rings it, the enqueuer or stop(), ends the sleep only once the process list shows it running,
 * token and all (parkedSleep.ts). Polling stays the backstop: a doorbell that cannot connect, an
 * enqueuer of another database user (it neither sees nor may end this connection's statement), or
 * an enqueue through another Galera node (KILL is node-local) only cost the latency of the
 * worker's next poll.
 */
export class Doorbell {
  #connection: unknown;
  /** The registration now asleep (or about to be): null from a failure of its connection on. */
  #self: { id: number; server: string; token: string } | null = null;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #retry: { timer: NodeJS.Timeout; resolve: () => void } | null = null;

  constructor(private readonly options: DoorbellOptions) {}

  start(): void {
    this.#loop = this.#run();
  }

  /** Forgets this worker's rows, ends the sleep, closes the connection. Never throws. */
  async stop(): Promise<void> {
    if (this.#stopped) return this.#loop;
    this.#stopped = true;
    if (this.#retry) {
      clearTimeout(this.#retry.timer);
      this.#retry.resolve();
    }
    const { knex, tables, workerId } = this.options;
    try {
      await knex.raw(sqlForget(tables), [workerId]);
      const self = this.#self;
      if (self) await this.#endSleep(self);
    } catch (error) {
      this.#report(error, 'forgetting the doorbell at stop');
    }
    // A sleep the KILL could not reach, or a connect that hangs on a server that is down: close
    // the connection under it, and the pool (which aborts a pending connect), rather than wait.
    const done = await Promise.race([
      this.#loop.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(resolve, STOP_WAIT_MS, false).unref()),
    ]);
    if (!done) (this.#connection as { destroy?: () => void } | undefined)?.destroy?.();
    await knex.destroy();
    await this.#loop;
  }

  /**
   * Ends our own sleep from another connection of the pool, verified there first: the same server
   * (behind a proxy it may reach another), and that connection id running our sleep with our
   * token (after a restart the id may name someone else's session).
   */
  async #endSleep(self: { id: number; server: string; token: string }): Promise<void> {
    const { knex } = this.options;
    const connection = await knex.client.acquireConnection();
    try {
      const on: RunOn = (sql, params = []) => knex.raw(sql, params as Knex.RawBinding[]).connection(connection);
      const here = await readIdentity(on);
      if (here.server !== self.server) return;
      const { parked } = await findParked(on, here, [{ connectionId: self.id, token: self.token }]);
      for (const sleep of parked) await killParked(on, sleep);
    } finally {
      await knex.client.releaseConnection(connection);
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        await this.#connectAndSleep();
      } catch (error) {
        // Whatever id we had may name another session once the server has restarted.
        this.#self = null;
        if (this.#stopped) break;
        this.#report(error, 'worker doorbell');
        await this.#release(true);
        await this.#pause(RECONNECT_DELAY_MS * (0.5 + Math.random()));
      }
    }
    await this.#release(false);
  }

  async #connectAndSleep(): Promise<void> {
    const { knex, tables, workerId, queues } = this.options;
    const connection = await knex.client.acquireConnection();
    this.#connection = connection;
    const on: RunOn = (sql, params = []) => knex.raw(sql, params as Knex.RawBinding[]).connection(connection);
    const self = await readIdentity(on);
    const token = newToken();
    this.#self = { id: self.id, server: self.server, token };
    const keys = [...new Set(queues.map(doorbellKey))];
    await on(
      sqlRegister(tables, keys.length),
      keys.flatMap((key) => [key, workerId, token, self.user]),
    );
    this.options.onRing();
    const sleep = sqlSleep(token);
    while (!this.#stopped) {
      try {
        const [[row]] = (await on(sleep)) as [{ interrupted: number }[]];
        if (Number(row?.interrupted) === 1 && !this.#stopped) this.options.onRing();
      } catch (error) {
        if ((error as { errno?: number }).errno !== ER.QUERY_INTERRUPTED) throw error;
        if (!this.#stopped) this.options.onRing();
      }
    }
  }

  async #release(broken: boolean): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    if (connection === undefined) return;
    const client = this.options.knex.client as {
      releaseConnection(c: unknown): Promise<void>;
      destroyRawConnection?(c: unknown): Promise<void>;
    };
    if (broken) (connection as { __knex__disposed?: unknown }).__knex__disposed = true;
    await client.releaseConnection(connection).catch(() => undefined);
  }

  #pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#retry = null;
        resolve();
      }, ms);
      this.#retry = { timer, resolve };
    });
  }

  #report(error: unknown, context: string): void {
    this.options.events.emit('doorbell:error', {
      error: error instanceof Error ? error : new Error(String(error)),
      context,
    });
  }
}
