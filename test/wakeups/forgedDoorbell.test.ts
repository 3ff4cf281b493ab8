import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSluice, type SluiceEventMap } from '../../src/index.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Whoever may INSERT into the doorbells table can write any connection id into it. An enqueue
 * must still end nothing but a doorbell's own sleep: not the query of another session of the
 * same user (KILL needs no privilege for those), nor, from an enqueuer that holds CONNECTION
 * ADMIN, anyone's.
 */
const db = useTestDatabase('forged_doorbell');
const suffix = randomBytes(3).toString('hex');
const APP = `sluice_app_${suffix}`;
const ADMIN = `sluice_cadm_${suffix}`;
const PASSWORD = randomBytes(9).toString('hex');

function urlFor(user: string): string {
  const url = new URL(db.url);
  url.username = user;
  url.password = PASSWORD;
  return url.toString();
}

beforeAll(async () => {
  await db.query('CREATE TABLE app_accounts (id INT PRIMARY KEY, balance INT NOT NULL)');
  for (const user of [APP, ADMIN]) {
    await db.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${PASSWORD}'`);
    // Table grants only: what an application's user has.
    await db.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON \`${db.name}\`.* TO '${user}'@'%'`);
  }
  const { flavor } = await db.sluice.serverInfo();
  await db.query(`GRANT ${flavor === 'mariadb' ? 'CONNECTION ADMIN' : 'CONNECTION_ADMIN'} ON *.* TO '${ADMIN}'@'%'`);
});

afterAll(async () => {
  for (const user of [APP, ADMIN]) await db.query(`DROP USER IF EXISTS '${user}'@'%'`);
});

/** A row in queue `queue` that names `victim`'s connection as a doorbell of `dbUser`, with a token of its own. */
async function forge(queue: string, victim: number, dbUser: string): Promise<void> {
  const [here] = await db.query<{ server: string }>("SELECT CONCAT(@@hostname, ':', @@port) AS server");
  await db.query(
    'INSERT INTO sluice_doorbells (queue, worker_id, server, connection_id, token, db_user, created_at) VALUES (?, ?, ?, ?, ?, ?, NOW(3))',
    [queue, `w-forged-${dbUser}`, here?.server, victim, randomBytes(16).toString('hex'), dbUser],
  );
}

/** One single-job enqueue by `user`, its rings sent (close() waits for them); the doorbell errors it reported. */
async function enqueueAs(user: string, queue: string): Promise<SluiceEventMap['doorbell:error'][]> {
  const enqueuer = createSluice({ url: urlFor(user), logger: testLogger });
  const errors: SluiceEventMap['doorbell:error'][] = [];
  enqueuer.events.on('doorbell:error', (e) => errors.push(e));
  try {
    await enqueuer.enqueue({ name: 'record', queue });
  } finally {
    await enqueuer.close();
  }
  return errors;
}

async function running(connectionId: number): Promise<void> {
  await waitFor(
    async () =>
      (await db.query('SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO IS NOT NULL', [connectionId]))
        .length === 1,
    { what: `the victim's statement running on ${connectionId}` },
  );
}

describe('forged doorbell rows', () => {
  it("a row naming another session of the enqueuer's own user: its UPDATE in a transaction is not interrupted", async () => {
    // (Every table of the test database is emptied before each test.)
    await db.query('INSERT INTO app_accounts VALUES (1, 100)');
    const victim = await mysql.createConnection({ uri: urlFor(APP) });
    try {
      await victim.query('BEGIN');
      // An UPDATE that takes two seconds, so that the ring comes while it runs.
      const update = victim.query('UPDATE app_accounts SET balance = balance + 1 WHERE id = 1 AND SLEEP(2) = 0');
      await running(victim.threadId);
      await forge('forged', victim.threadId, APP);
      const errors = await enqueueAs(APP, 'forged');
      const [result] = (await update) as [{ affectedRows: number }, unknown];
      expect(result.affectedRows).toBe(1);
      await victim.query('COMMIT');
      expect(errors.map((e) => `${e.context}: ${e.error.message}`)).toEqual([]);
    } finally {
      await victim.end();
    }
  });

  it("an enqueuer that holds CONNECTION ADMIN does not end root's query named by a forged row", async () => {
    const root = await mysql.createConnection({ uri: db.url });
    try {
      const report = root.query('SELECT SLEEP(2) AS interrupted');
      await running(root.threadId);
      // Rows that say the doorbell is the enqueuer's own user, and rows that say it is root's.
      await forge('forged-admin', root.threadId, ADMIN);
      await forge('forged-admin', root.threadId, 'root');
      const errors = await enqueueAs(ADMIN, 'forged-admin');
      const [[row]] = (await report) as [{ interrupted: number }[], unknown];
      expect(row?.interrupted).toBe(0);
      // Root's rows are reported once as another user's, left to polling; no privilege is advised.
      expect(errors.map((e) => e.context)).toEqual(['ringing workers of another database user']);
      expect(errors[0]?.error).toMatchObject({ code: 'SLUICE_DOORBELL_UNREACHABLE' });
      expect(errors[0]?.error.message).not.toMatch(/CONNECTION.?ADMIN|SUPER|grant/i);
    } finally {
      await root.end();
    }
  });
});
