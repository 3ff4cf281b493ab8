import type { Knex } from 'knex';
import { ER } from '../db/mysqlErrors.ts';
import type { Tables } from '../db/tables.ts';
import type { SluiceEvents } from '../events.ts';

/**
 * Params: (?1 queue, ?2 worker id) per queue. Run on the doorbell's own connection, so that
 * CONNECTION_ID() and the server name are that connection's. Re-registering (after a reconnect)
 * replaces the old connection id.
 */
const sqlRegister = (t: Tables, queues: number) => `
INSERT INTO ${t.doorbells} (queue, worker_id, server, connection_id, created_at)
VALUES ${Array.from({ length: queues }, () => "(?, ?, CONCAT(@@hostname, ':', @@port), CONNECTION_ID(), NOW(3))").join(',\n       ')}
ON DUPLICATE KEY UPDATE server = VALUES(server), connection_id = VALUES(connection_id), created_at = VALUES(created_at)`;

/** Params: none. This connection's id and server, to find it again at stop. */
const sqlWhoAmI = `
SELECT CONNECTION_ID() AS id, CONCAT(@@hostname, ':', @@port) AS server`;

/**
 * Params: ?1 seconds. The doorbell itself: ends after that long (returns 0), or early when an
 * enqueuer sends KILL QUERY (MariaDB: error 1317; MySQL: returns 1).
 */
const sqlSleep = `
SELECT SLEEP(?) AS interrupted`;

/** Params: ?1 worker id. A stopping worker's rings. */
const sqlForget = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id = ?`;

/** Params: ?1 connection id. Ends a sleep; sent at stop over another connection to the same server. */
const sqlKillQuery = `
KILL QUERY ?`;

/** How long one sleep lasts before it is simply sent again: a statement per this many seconds per idle worker. */
export const DOORBELL_SLEEP_SECONDS = 30;
/** How long stop() waits for the sleep to end before it closes the connection under it. */
const STOP_WAIT_MS = 2_000;
/** After a failure of the doorbell's connection: wait about this long (jittered) before reconnecting. */
const RECONNECT_DELAY_MS = 2_000;

export interface DoorbellOptions {
  readonly knex: Knex;
  readonly tables: Tables;
  readonly events: SluiceEvents;
  readonly workerId: string;
  readonly queues: readonly string[];
  /** Called when the doorbell rings, and once after every (re)registration (jobs may have come meanwhile). */
  readonly onRing: () => void;
}

/**
 * A worker's doorbell, so that an enqueue in another process wakes it within milliseconds
 * (MySQL has no LISTEN/NOTIFY):
 *
 *   connect ──▶ register (doorbells rows) ──▶ sleep ──(rung: KILL QUERY)──▶ onRing, sleep again
 *      ▲                                        │ (slept out: sleep again)
 *      └──────── failure: wait, reconnect ◀─────┘                   stop(): forget rows, end the sleep
 *
 * The connection is held for the worker's life (one server thread per worker, asleep). Polling
 * stays the backstop: a doorbell that cannot connect, a KILL the enqueuer may not send (another
 * user without CONNECTION_ADMIN), or an enqueue through another Galera node (KILL is node-local)
 * only cost the latency of the worker's next poll.
 */
export class Doorbell {
  #connection: unknown;
  #self: { id: number; server: string } | null = null;
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
      if (self) {
        // KILL by id only on the same server: behind a proxy this connection may reach another one.
        const [[here]] = (await knex.raw(sqlWhoAmI)) as [{ server: string }[]];
        if (here?.server === self.server) await knex.raw(sqlKillQuery, [self.id]);
      }
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

  async #run(): Promise<void> {
    while (!this.#stopped) {
      try {
        await this.#connectAndSleep();
      } catch (error) {
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
    const on = (sql: string, params: readonly unknown[] = []) =>
      knex.raw(sql, params as Knex.RawBinding[]).connection(connection);
    const [[self]] = (await on(sqlWhoAmI)) as [{ id: number; server: string }[]];
    if (!self) throw new Error('the doorbell connection did not say who it is');
    this.#self = { id: Number(self.id), server: String(self.server) };
    await on(
      sqlRegister(tables, queues.length),
      queues.flatMap((queue) => [queue, workerId]),
    );
    this.options.onRing();
    while (!this.#stopped) {
      try {
        const [[row]] = (await on(sqlSleep, [DOORBELL_SLEEP_SECONDS])) as [{ interrupted: number }[]];
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
