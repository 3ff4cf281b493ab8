import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../src/errors.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The first promise of the project: a batch lands whole or not at all — also when the server
 * aborts the transaction half-way. A deadlock makes the server roll back the whole transaction;
 * any statement of the batch already queued on that connection would then run in autocommit and
 * commit on its own (and the retry of the transaction would write it a second time).
 */
const db = useTestDatabase('aborted_batch');

const JOBS = 3_000;
const ROWS_PER_INSERT = 500;

describe('a batch whose transaction the server aborts between chunks', () => {
  it('lands whole: no chunk of the aborted attempt commits on its own, and the retry writes each job once', async () => {
    const sluice = db.open({ maxRowsPerInsert: ROWS_PER_INSERT });
    const jobs = Array.from({ length: JOBS }, (_, n) => ({ name: 'work', payload: { n } }));
    const result = await abortedOnce(() => sluice.enqueueBatch(jobs), 'sluice_jobs', 'id');
    await expectWholeOnce(result.batchId);
  });

  it('lands whole when the abort meets a chunk’s payloads stored apart, written while the next chunk gathers', async () => {
    const sluice = db.open({ maxRowsPerInsert: ROWS_PER_INSERT });
    // Over 1 KiB: each payload goes to job_payloads, the last statement of a chunk's left in flight.
    const jobs = Array.from({ length: JOBS }, (_, n) => ({ name: 'work', payload: { n, pad: randomText(1500, n) } }));
    const result = await abortedOnce(() => sluice.enqueueBatch(jobs), 'sluice_job_payloads', 'job_id');
    await expectWholeOnce(result.batchId);
    const [payloads] = await db.query<{ rows: number; orphans: number; n: number }>(
      `SELECT COUNT(*) AS \`rows\`,
              SUM(j.id IS NULL) AS orphans,
              COUNT(DISTINCT JSON_VALUE(p.payload, '$.n')) AS n
       FROM sluice_job_payloads p LEFT JOIN sluice_jobs j ON j.id = p.job_id`,
    );
    expect({ rows: Number(payloads?.rows), orphans: Number(payloads?.orphans), n: Number(payloads?.n) }).toEqual({
      rows: JOBS,
      orphans: 0,
      n: JOBS,
    });
  });

  it('in the caller’s transaction, a bad job met while the server aborts a statement in flight reports the abort', async () => {
    const sluice = db.open({ maxRowsPerInsert: ROWS_PER_INSERT });
    // Job 550 is bad; the first chunk's payloads are in flight, waiting on the rival, when it is met.
    const jobs = Array.from({ length: 600 }, (_, n) => ({
      name: 'work',
      payload: { n, pad: randomText(1500, n) },
      priority: n === 550 ? 1.5 : 0,
    }));
    const failure = await abortedOnce(
      () =>
        sluice.knex
          .transaction((trx) => sluice.enqueueBatch(jobs, { trx }))
          .then(
            () => null,
            (error: unknown) => error,
          ),
      'sluice_job_payloads',
      'job_id',
    );
    // The caller's whole transaction is gone: a JobValidationError would let it carry on, in autocommit.
    expect(failure).not.toBeInstanceOf(JobValidationError);
    expect((failure as { errno?: number }).errno).toBe(1213);
    expect(await db.query('SELECT id FROM sluice_jobs')).toEqual([]);
  });
});

/**
 * Makes the server abort the batch's transaction once: a heavier rival transaction holds the gap
 * above the last row of `table`, the batch's first INSERT into it waits, then the rival waits on
 * the batch's row, a cycle. The server rolls the lighter transaction — the batch's — back (1213),
 * and sluice retries it whole. Returns the batch's result.
 */
async function abortedOnce<T>(start: () => Promise<T>, table: string, key: string): Promise<T> {
  const rival = await mysql.createConnection({ uri: db.url });
  await rival.query('CREATE TABLE IF NOT EXISTS heavy (id INT PRIMARY KEY) ENGINE=InnoDB');
  await rival.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  await rival.query('BEGIN');
  await rival.query('INSERT INTO heavy (id) SELECT seq FROM seq_1_to_2000');
  await rival.query(`SELECT ${key} FROM ${table} WHERE ${key} > 0 FOR UPDATE`);
  const enqueue = start();
  // (information_schema.innodb_trx was seen empty on MariaDB 10.11 during such a wait; the
  // processlist shows the INSERT that waits.)
  const observer = await mysql.createConnection({ uri: db.url });
  await waitFor(
    async () => {
      const [rows] = (await observer.query(
        `SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'INSERT INTO \`${table}\`%'`,
      )) as unknown as [{ n: number }[]];
      return Number(rows[0]?.n) > 0;
    },
    { what: 'the batch waiting on the rival' },
  );
  await observer.end();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const rivalWait = rival.query('SELECT id FROM sluice_batches FOR UPDATE').catch((e: unknown) => e);
  await new Promise((resolve) => setTimeout(resolve, 500));
  await rival.query('COMMIT').catch(() => undefined);
  await rivalWait;
  await rival.query('COMMIT');
  await rival.query('DROP TABLE heavy');
  await rival.end();
  return enqueue;
}

/** Every job once, all of them in the one batch, which says so. */
async function expectWholeOnce(batchId: number | null): Promise<void> {
  const [counts] = await db.query<{ jobs: number; distinct_n: number; orphans: number }>(
    `SELECT COUNT(*) AS jobs,
            COUNT(DISTINCT JSON_VALUE(COALESCE(NULLIF(j.payload, ''), p.payload), '$.n')) AS distinct_n,
            SUM(j.batch_id IS NULL OR j.batch_id NOT IN (SELECT id FROM sluice_batches)) AS orphans
     FROM sluice_jobs j LEFT JOIN sluice_job_payloads p ON p.job_id = j.id`,
  );
  expect({
    jobs: Number(counts?.jobs),
    distinct: Number(counts?.distinct_n),
    orphans: Number(counts?.orphans),
  }).toEqual({ jobs: JOBS, distinct: JOBS, orphans: 0 });
  expect(await db.query('SELECT id, size FROM sluice_batches')).toEqual([{ id: batchId, size: JOBS }]);
}
