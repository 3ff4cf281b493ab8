import mysql from 'mysql2/promise';
import { newToken, readIdentity, sqlSleep } from '../../src/wakeups/parkedSleep.ts';
import { waitFor } from './waitFor.ts';

/**
 * A worker's doorbell without the worker: a connection of the test that registers a row as
 * src/wakeups/Doorbell.ts does (its id, server, user, a fresh token) and parks in the very same
 * sleep. `orphan()` drops the client side as a SIGKILLed worker does: the server thread goes on
 * sleeping until something ends it.
 */
export interface StandInDoorbell {
  readonly id: number;
  readonly user: string;
  readonly server: string;
  readonly token: string;
  readonly workerId: string;
  /** 'rung' once the sleep was ended by a KILL; 'slept' if it ran out; 'lost' after orphan(). */
  readonly outcome: Promise<'rung' | 'slept' | 'lost'>;
  readonly rung: () => boolean;
  orphan(): void;
  end(): Promise<void>;
}

export async function parkStandIn(
  url: string,
  queue: string,
  workerId: string,
  options: { table?: string } = {},
): Promise<StandInDoorbell> {
  const connection = await mysql.createConnection({ uri: url });
  const self = await readIdentity(async (sql, params) => connection.query(sql, params as unknown[]));
  const token = newToken();
  await connection.query(
    `INSERT INTO ${options.table ?? 'sluice_doorbells'} (queue, worker_id, server, connection_id, token, db_user, created_at)
     VALUES (?, ?, ?, ?, ?, ?, NOW(3))`,
    [queue, workerId, self.server, self.id, token, self.user],
  );
  let rung = false;
  let orphaned = false;
  const outcome = connection.query(sqlSleep(token)).then(
    ([rows]) => {
      rung = Number((rows as { interrupted: number }[])[0]?.interrupted) === 1;
      return rung ? ('rung' as const) : ('slept' as const);
    },
    (error: { errno?: number }) => {
      if (orphaned) return 'lost' as const;
      if (error.errno !== 1317) throw error;
      rung = true;
      return 'rung' as const;
    },
  );
  await waitFor(
    async () => {
      const [rows] = (await (
        await observer(url)
      ).query('SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = ?', [self.id])) as [
        { INFO: string | null }[],
        unknown,
      ];
      return rows[0]?.INFO === sqlSleep(token);
    },
    { what: `stand-in ${workerId} asleep` },
  );
  return {
    ...self,
    token,
    workerId,
    outcome,
    rung: () => rung,
    orphan() {
      orphaned = true;
      connection.destroy();
    },
    async end() {
      if (orphaned) return;
      orphaned = true;
      connection.destroy();
      await outcome.catch(() => undefined);
    },
  };
}

const observers = new Map<string, Promise<mysql.Connection>>();

/** One connection per URL that watches the process list (its user sees its own threads). */
function observer(url: string): Promise<mysql.Connection> {
  let found = observers.get(url);
  if (!found) {
    found = mysql.createConnection({ uri: url });
    observers.set(url, found);
  }
  return found;
}

/** Closes the process-list watchers (call in afterAll). */
export async function closeObservers(): Promise<void> {
  const all = [...observers.values()];
  observers.clear();
  await Promise.all(all.map(async (c) => (await c).end().catch(() => undefined)));
}
