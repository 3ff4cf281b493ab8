import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
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
    const rival = await mysql.createConnection({ uri: db.url });
    await rival.query('CREATE TABLE IF NOT EXISTS heavy (id INT PRIMARY KEY) ENGINE=InnoDB');
    // A heavier transaction (many rows written) that blocks every insert into the jobs table: it
    // holds the gap above the last job. The deadlock it is about to make picks the lighter
    // transaction — the batch's — as its victim.
    await rival.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await rival.query('BEGIN');
    await rival.query(`INSERT INTO heavy (id) SELECT seq FROM seq_1_to_2000`);
    await rival.query('SELECT id FROM sluice_jobs WHERE id > 0 FOR UPDATE');

    const enqueue = sluice.enqueueBatch(Array.from({ length: JOBS }, (_, n) => ({ name: 'work', payload: { n } })));
    // The batch row is written; its first INSERT waits for the rival's gap lock.
    // (information_schema.innodb_trx was seen empty on MariaDB 10.11 during such a wait; the
    // processlist shows the INSERT that waits.)
    const observer = await mysql.createConnection({ uri: db.url });
    await waitFor(
      async () => {
        const [rows] = (await observer.query(
          "SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'INSERT INTO `sluice_jobs`%'",
        )) as unknown as [{ n: number }[]];
        return Number(rows[0]?.n) > 0;
      },
      { what: 'the batch waiting on the rival' },
    );
    await observer.end();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The rival now waits on the batch's row: a cycle. The server rolls the batch back (1213).
    const rivalWait = rival.query('SELECT id FROM sluice_batches FOR UPDATE').catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await rival.query('COMMIT').catch(() => undefined);
    await rivalWait;
    await rival.query('COMMIT');
    await rival.end();

    const result = await enqueue;
    expect(result.count).toBe(JOBS);
    const [counts] = await db.query<{ jobs: number; distinct_n: number; orphans: number }>(
      `SELECT COUNT(*) AS jobs,
              COUNT(DISTINCT JSON_VALUE(payload, '$.n')) AS distinct_n,
              SUM(batch_id IS NULL OR batch_id NOT IN (SELECT id FROM sluice_batches)) AS orphans
       FROM sluice_jobs`,
    );
    expect({
      jobs: Number(counts?.jobs),
      distinct: Number(counts?.distinct_n),
      orphans: Number(counts?.orphans),
    }).toEqual({
      jobs: JOBS,
      distinct: JOBS,
      orphans: 0,
    });
    expect(await db.query('SELECT id, size FROM sluice_batches')).toEqual([{ id: result.batchId, size: JOBS }]);
  });
});
