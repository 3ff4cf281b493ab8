import knexFactory, { type Knex } from 'knex';
import { afterAll, describe, expect, it } from 'vitest';
import { createSluice, defineJob, type Sluice } from '../../src/index.ts';
import { jobRow } from '../helpers/factory.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * A transient conflict (a deadlock, a lock-wait timeout, a Galera certification failure) is
 * re-run by whoever owns the transaction; it is never a failed attempt of the job: no job:failed,
 * no retry_times + 1 — not even after every re-run of it conflicted. Made here with real lock
 * waits: the worker's sessions wait at most 1 s for a row lock, and the test holds the row.
 */
const db = useTestDatabase('conflicts');

const knexes: Knex[] = [];
afterAll(async () => {
  await Promise.all(knexes.map((k) => k.destroy()));
});

/** A sluice on an application knex whose sessions wait at most 1 s for a row lock (1205 after that). */
function impatientSluice(): Sluice {
  const url = new URL(db.url);
  const knex = knexFactory({
    client: 'mysql2',
    connection: {
      host: url.hostname,
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
      timezone: 'Z',
      jsonStrings: true,
      supportBigNumbers: true,
    } as Knex.MySql2ConnectionConfig,
    pool: {
      min: 0,
      max: 6,
      afterCreate(
        connection: { query(sql: string, cb: (e: Error | null) => void): void },
        done: (e: Error | null, c: unknown) => void,
      ) {
        connection.query(
          "SET NAMES utf8mb4 COLLATE utf8mb4_bin, time_zone = '+00:00', innodb_lock_wait_timeout = 1",
          (error) => done(error, connection),
        );
      },
    },
  });
  knexes.push(knex);
  return createSluice({ knex, logger: testLogger });
}

/** Holds a lock on `sql`'s rows in an open transaction of its own until release(). */
async function holdLock(sql: string, params: unknown[]) {
  const holder = db.open({ poolMax: 1 });
  const trx = await holder.knex.transaction();
  await trx.raw(sql, params as never[]);
  return { release: async () => void (await trx.rollback()) };
}

describe('transient conflicts are re-run, never counted as failed attempts', () => {
  it('an exactly-once job whose every run conflicts is given back uncounted (job:conflicted, no job:failed), then completes', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS app_accounts (id INT PRIMARY KEY, balance INT NOT NULL) ENGINE=InnoDB');
    await db.query('DELETE FROM app_accounts');
    await db.query('INSERT INTO app_accounts VALUES (1, 0)');
    const sluice = impatientSluice();
    const events = recordEvents(sluice);
    let runs = 0;
    const credit = defineJob({
      name: 'credit',
      delivery: 'exactly-once',
      maxRetries: 0, // one counted failure would dead-letter it
      async handle(_payload, ctx) {
        runs++;
        await ctx.trx!.raw('UPDATE app_accounts SET balance = balance + 1 WHERE id = 1');
      },
    });
    const { id } = await sluice.enqueue({ name: 'credit' });
    // Another transaction holds the account row: every run of the job's transaction waits 1 s and gets 1205.
    const lock = await holdLock('SELECT id FROM app_accounts WHERE id = 1 FOR UPDATE', []);
    let released = false;
    try {
      await withWorker(sluice, [credit], { concurrency: 1, lockTimeoutMs: 60_000 }, async () => {
        await waitFor(() => events['job:conflicted'].length >= 1, { what: 'job:conflicted', timeoutMs: 20_000 });
        expect(events['job:conflicted'][0]).toMatchObject({ jobId: id, name: 'credit', runs: 3 });
        expect((events['job:conflicted'][0]?.error as { errno?: number } | undefined)?.errno).toBe(1205);
        await lock.release();
        released = true;
        await waitFor(() => events['job:completed'].length === 1, { what: 'the job completed', timeoutMs: 20_000 });
      });
    } finally {
      if (!released) await lock.release();
    }
    expect(runs).toBeGreaterThanOrEqual(4);
    expect(events['job:failed']).toEqual([]);
    expect(events['job:retried']).toEqual([]);
    expect(events['job:dead']).toEqual([]);
    expect(await db.query('SELECT balance FROM app_accounts')).toEqual([{ balance: 1 }]);
    expect(await jobRow(db, id)).toBeUndefined();
  });

  it('a completion whose DELETE conflicted past its re-runs is written again, not left for the sweeper to count as a failure', async () => {
    const sluice = impatientSluice();
    const events = recordEvents(sluice);
    let deletes = 0;
    sluice.knex.on('query', (q: { sql: string }) => {
      if (/^\s*DELETE FROM `sluice_jobs`/.test(q.sql)) deletes++;
    });
    const { id } = await sluice.enqueue({ name: 'ok', queue: 'completions' });
    // The handler takes a lock on its own job's row in another transaction: the completion's
    // DELETE waits 1 s and gets 1205, six times over (the Executor's re-runs of one statement).
    let lock: { release(): Promise<void> } | undefined;
    const ok = defineJob({
      name: 'ok',
      handle: async () => {
        lock = await holdLock('SELECT id FROM sluice_jobs WHERE id = ? FOR UPDATE', [id]);
      },
    });
    try {
      await withWorker(sluice, [ok], { queues: ['completions'], concurrency: 1, lockTimeoutMs: 600_000 }, async () => {
        // A seventh DELETE: the completion went back into the buffer after its six runs conflicted.
        await waitFor(() => deletes >= 7, {
          what: 'the completion written again after 6 conflicts',
          timeoutMs: 30_000,
        });
        await lock?.release();
        await waitFor(() => events['job:completed'].length === 1, { what: 'the job completed', timeoutMs: 30_000 });
      });
    } finally {
      await lock?.release().catch(() => undefined);
    }
    expect(events['worker:error']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    expect(await jobRow(db, id)).toBeUndefined();
  });
});
