import knexFactory from 'knex';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { SluiceEvents } from '../../src/events.ts';
import { Ringer } from '../../src/wakeups/Ringer.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The enqueuer's side of the wake-up (src/wakeups/Ringer.ts) against the real server, with a
 * stand-in doorbell: a connection of the test asleep in SELECT SLEEP, registered as a worker's.
 */
const db = useTestDatabase('ringer');

describe('Ringer', () => {
  it('a worker that registers just after the queue was found empty is rung by the next enqueue, not a second later', async () => {
    const knex = knexFactory({ client: 'mysql2', connection: db.url, pool: { min: 0, max: 1 } });
    const sleeper = await mysql.createConnection({ uri: db.url });
    const ringer = new Ringer({ knex, tables: db.sluice.tables, events: new SluiceEvents() });
    try {
      // An enqueue into a queue nobody waits on: the ringer reads (and keeps) an empty list.
      ringer.ring('sluice_', new Map([['fresh', 1]]));
      await ringer.settled();
      // A worker comes up: its doorbell connection sleeps and registers.
      const [[self]] = (await sleeper.query("SELECT CONNECTION_ID() AS id, CONCAT(@@hostname, ':', @@port) AS s")) as [
        { id: number; s: string }[],
        unknown,
      ];
      let interrupted: number | null = null;
      const sleeping = sleeper.query('SELECT SLEEP(30)').then(
        () => undefined,
        (error: { errno?: number }) => {
          interrupted = error.errno ?? -1;
        },
      );
      await db.query(
        "INSERT INTO sluice_doorbells (queue, worker_id, server, connection_id, created_at) VALUES ('fresh', 'w-new', ?, ?, NOW(3))",
        [self?.s, self?.id],
      );
      // Well within the second a non-empty list is kept, past the 100 ms an empty one is.
      await new Promise((resolve) => setTimeout(resolve, 250));
      // The next enqueue rings it.
      ringer.ring('sluice_', new Map([['fresh', 1]]));
      await ringer.settled();
      await waitFor(() => interrupted !== null, { timeoutMs: 5_000, what: 'the sleeping doorbell rung' });
      expect(interrupted).toBe(1317);
      await sleeping;
    } finally {
      await ringer.close();
      await knex.destroy();
      await sleeper.end();
    }
  });
});
