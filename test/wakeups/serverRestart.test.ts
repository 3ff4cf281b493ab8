import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { SluiceEvents } from '../../src/events.ts';
import { createSluice } from '../../src/index.ts';
import { Doorbell } from '../../src/wakeups/Doorbell.ts';
import { type RestartableServer, startRestartableServer } from '../helpers/restartableServer.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcpProxy.ts';
import { testLogger } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A doorbell row outlives the server life it was written in: after a restart its connection id
 * names whoever connects that many connections in. On a private server restarted at will, with
 * every sluice process and the victim connected as one least-privilege user (table grants only:
 * KILL needs no privilege between them), a ring (an enqueue's, or a stopping doorbell's own) must
 * not end the statement of the session that got the old id.
 */
const DATABASE = 'sluice_restart';
const APP = 'app';
const PASSWORD = 'app-password';
const LONG_POLL = 120_000;
const tables = tablesFor('sluice_');

let server: RestartableServer;
let rootUrl: string;
let appUrl: string;

beforeAll(async () => {
  server = await startRestartableServer();
  rootUrl = `${server.rootUrl}${DATABASE}`;
  appUrl = `mysql://${APP}:${PASSWORD}@127.0.0.1:${server.port}/${DATABASE}`;
  const root = await mysql.createConnection({ uri: server.rootUrl });
  await root.query(`CREATE DATABASE ${DATABASE}`);
  await root.query(`CREATE USER '${APP}'@'%' IDENTIFIED BY '${PASSWORD}'`);
  await root.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${DATABASE}.* TO '${APP}'@'%'`);
  await root.end();
  const sluice = createSluice({ url: rootUrl, logger: testLogger });
  await sluice.migrate();
  await sluice.close();
}, 120_000);

afterAll(() => server?.stop());

/** Opens and closes connections so that the doorbell's id is well past where ids start after a restart. */
async function spendIds(count: number): Promise<void> {
  for (let n = 0; n < count; n++) await (await mysql.createConnection({ uri: appUrl })).end();
}

interface Victim {
  /** Waits until the victim's SLEEP has run WATCHED_MS (or now, if later) and says whether it still runs. */
  untouched(): Promise<boolean>;
  /** Ends the SLEEP (root's KILL QUERY) and the connection. */
  end(): Promise<void>;
}

/** How long the victim is watched for a stray KILL: the rings of the test's step land well within it. */
const WATCHED_MS = 3_000;

/**
 * After a restart: connections of the app user, one after another, until one gets `id`; it runs a
 * SLEEP far longer than the test, so a KILL is seen whenever it lands, however slow the step was.
 */
async function victimWithId(id: number): Promise<Victim> {
  for (;;) {
    const connection = await mysql.createConnection({ uri: appUrl });
    if (connection.threadId > id) throw new Error(`connection ids after the restart start past ${id}`);
    if (connection.threadId < id) {
      await connection.end();
      continue;
    }
    const started = performance.now();
    const result = connection.query('SELECT SLEEP(600) AS interrupted').catch(() => undefined);
    return {
      untouched: async () => {
        await sleep(Math.max(0, started + WATCHED_MS - performance.now()));
        const root = await mysql.createConnection({ uri: rootUrl });
        try {
          const [rows] = (await root.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE 'SELECT SLEEP(600)%'",
            [id],
          )) as [{ n: number }[], unknown];
          return Number(rows[0]?.n) === 1;
        } finally {
          await root.end();
        }
      },
      end: async () => {
        const root = await mysql.createConnection({ uri: rootUrl });
        await root.query(`KILL QUERY ${id}`).finally(() => root.end());
        await result;
        await connection.end();
      },
    };
  }
}

async function doorbellId(queue: string): Promise<number> {
  const root = await mysql.createConnection({ uri: rootUrl });
  try {
    const row = await waitFor(
      async () => {
        const [rows] = (await root.query('SELECT connection_id FROM sluice_doorbells WHERE queue = ?', [queue])) as [
          { connection_id: number }[],
          unknown,
        ];
        return rows[0];
      },
      { what: `a doorbell on ${queue}` },
    );
    return Number(row?.connection_id);
  } finally {
    await root.end();
  }
}

async function enqueueOne(queue: string): Promise<void> {
  const enqueuer = createSluice({ url: appUrl, logger: testLogger });
  try {
    await enqueuer.enqueue({ name: 'record', queue });
  } finally {
    await enqueuer.close();
  }
}

/** A doorbell of this process whose connections go through `proxy` (cut it, and it cannot reconnect). */
function doorbellThrough(proxy: TcpProxy, queue: string, events: SluiceEvents): Doorbell {
  // A pool as a worker's doorbell gets one (Sluice.ts: doorbellKnex).
  const knex = connect({ url: proxy.url, poolMax: 2, logger: testLogger });
  const doorbell = new Doorbell({ knex, tables, events, workerId: `w-${queue}`, queues: [queue], onRing: () => {} });
  doorbell.start();
  return doorbell;
}

describe('after a server restart', () => {
  it("a SIGKILLed worker's row: one enqueue does not end the statement of the session that got its id", async () => {
    await spendIds(40);
    const worker = spawnWorker(appUrl, { queues: 'killed', pollIntervalMs: LONG_POLL, maxPollIntervalMs: LONG_POLL });
    await worker.ready;
    const id = await doorbellId('killed');
    worker.kill('SIGKILL');
    await worker.exited;
    await server.restart();
    const victim = await victimWithId(id);
    try {
      await enqueueOne('killed');
      expect(await victim.untouched()).toBe(true);
    } finally {
      await victim.end();
    }
  });

  it('a live doorbell that has not reconnected yet: one enqueue does not end the session that got its id', async () => {
    await spendIds(40);
    const proxy = await startTcpProxy(appUrl);
    const events = new SluiceEvents();
    const doorbell = doorbellThrough(proxy, 'live', events);
    try {
      const id = await doorbellId('live');
      proxy.cut();
      await server.restart();
      const victim = await victimWithId(id);
      try {
        await enqueueOne('live');
        expect(await victim.untouched()).toBe(true);
      } finally {
        await victim.end();
      }
    } finally {
      proxy.restore();
      await doorbell.stop();
      await proxy.close();
    }
  });

  it('a doorbell stopped while it waits to reconnect does not end the statement of the session that got its id', async () => {
    await spendIds(40);
    const proxy = await startTcpProxy(appUrl);
    const events = new SluiceEvents();
    const failures: string[] = [];
    events.on('doorbell:error', (e) => failures.push(e.context));
    const doorbell = doorbellThrough(proxy, 'stopping', events);
    try {
      const id = await doorbellId('stopping');
      // Its connection fails (as in any restart); it cannot reconnect through the cut proxy.
      proxy.cut();
      await waitFor(() => failures.length > 0, { what: 'the doorbell saw its connection fail' });
      await server.restart();
      const victim = await victimWithId(id);
      try {
        // Back, and stopped in the same tick: the doorbell never got to reconnect.
        proxy.restore();
        await doorbell.stop();
        expect(await victim.untouched()).toBe(true);
      } finally {
        await victim.end();
      }
    } finally {
      proxy.restore();
      await doorbell.stop();
      await proxy.close();
    }
  });
});
