import { beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/index.ts';
import { countRows, jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * enqueueBatch writes all or nothing, alone or in the caller's transaction, and what it writes.
 * Invalid jobs: enqueueBatchValidation.test.ts; run_at and the database clock: enqueueRunAt.test.ts.
 */
const db = useTestDatabase('enqueue_batch');

async function countJobs(): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs');
  return Number(row?.n);
}

/** A real server-side failure: a trigger that refuses any job named 'boom'. Dropped after `fn`. */
async function withBoomTrigger<T>(fn: () => Promise<T>): Promise<T> {
  await db.query(`
    CREATE TRIGGER sluice_jobs_boom BEFORE INSERT ON sluice_jobs FOR EACH ROW
    BEGIN
      IF NEW.name = 'boom' THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom refused by trigger';
      END IF;
    END`);
  try {
    return await fn();
  } finally {
    await db.query('DROP TRIGGER IF EXISTS sluice_jobs_boom');
  }
}

function numbered(count: number, extra: Partial<JobSpec> = {}): JobSpec[] {
  return Array.from({ length: count }, (_, n) => ({ name: 'work', payload: { n }, ...extra }));
}

beforeAll(async () => {
  await db.query(
    'CREATE TABLE biz_orders (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(64) NOT NULL) ENGINE=InnoDB',
  );
});

describe('enqueueBatch', () => {
  it('writes nothing, batch row included, when the third of five INSERT chunks fails on the server', async () => {
    const sluice = db.open({ maxRowsPerInsert: 100 });
    const jobs = numbered(500);
    jobs[250] = { name: 'boom', payload: { n: 250 } };
    const enqueued: unknown[] = [];
    sluice.events.on('batch:enqueued', (e) => enqueued.push(e));

    const error = await withBoomTrigger(() => sluice.enqueueBatch(jobs).catch((e: unknown) => e));

    expect(error).toMatchObject({ errno: 1644, sqlState: '45000' });
    expect((error as Error).message).toContain('boom refused by trigger');
    expect(await countJobs()).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
    expect(enqueued).toEqual([]);
    // The first two chunks (200 rows) really were inserted before the third failed: InnoDB does
    // not give back the auto-increment values a rolled-back INSERT consumed.
    const { id } = await db.sluice.enqueue({ name: 'after' });
    expect(id).toBeGreaterThan(200);
  });

  it('rolls back only its own savepoint when a chunk fails inside the caller’s transaction', async () => {
    const sluice = db.open({ maxRowsPerInsert: 100 });
    const jobs = numbered(500);
    jobs[299] = { name: 'boom' };
    await withBoomTrigger(() =>
      sluice.knex.transaction(async (trx) => {
        await trx.raw('INSERT INTO biz_orders (note) VALUES (?)', ['kept']);
        const error = await sluice.enqueueBatch(jobs, { trx }).catch((e: unknown) => e);
        expect(error).toMatchObject({ errno: 1644 });
      }),
    );
    expect(await countJobs()).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
    expect(await db.query('SELECT note FROM biz_orders')).toEqual([{ note: 'kept' }]);
  });

  it('rolls back with the caller’s transaction: no jobs, no batch, no business row', async () => {
    const rollback = new Error('business rule failed after enqueue');
    const error = await db.sluice.knex
      .transaction(async (trx) => {
        await trx.raw('INSERT INTO biz_orders (note) VALUES (?)', ['order 1']);
        const result = await db.sluice.enqueueBatch(numbered(1_000), { trx });
        expect(result.count).toBe(1_000);
        throw rollback;
      })
      .catch((e: unknown) => e);
    expect(error).toBe(rollback);
    expect(await countJobs()).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
    expect(await countRows(db, 'biz_orders')).toBe(0);
  });

  it('commits with the caller’s transaction: every job and the business row', async () => {
    let batchId: number | null = null;
    await db.sluice.knex.transaction(async (trx) => {
      await trx.raw('INSERT INTO biz_orders (note) VALUES (?)', ['order 2']);
      ({ batchId } = await db.sluice.enqueueBatch(numbered(1_000), { trx }));
      // Not visible outside the transaction before it commits.
      expect(await countJobs()).toBe(0);
    });
    expect(batchId).not.toBeNull();
    expect(await countRows(db, 'sluice_jobs', 'batch_id = ?', [batchId])).toBe(1_000);
    expect(await db.query('SELECT size FROM sluice_batches WHERE id = ?', [batchId])).toEqual([{ size: 1_000 }]);
    expect(await db.query('SELECT note FROM biz_orders')).toEqual([{ note: 'order 2' }]);
  });

  it('writes a 100,000-job batch completely, every row carrying the batch id', async () => {
    const result = await db.sluice.enqueueBatch(numbered(100_000));
    expect(result.count).toBe(100_000);
    expect(result.batchId).toEqual(expect.any(Number));
    const [summary] = await db.query<Record<string, number | string | null>>(
      `SELECT COUNT(*) AS n,
              COUNT(DISTINCT JSON_VALUE(payload, '$.n')) AS distinct_n,
              MIN(CAST(JSON_VALUE(payload, '$.n') AS UNSIGNED)) AS min_n,
              MAX(CAST(JSON_VALUE(payload, '$.n') AS UNSIGNED)) AS max_n,
              SUM(batch_id = ?) AS in_batch
       FROM sluice_jobs`,
      [result.batchId],
    );
    expect(Object.fromEntries(Object.entries(summary ?? {}).map(([k, v]) => [k, Number(v)]))).toEqual({
      n: 100_000,
      distinct_n: 100_000,
      min_n: 0,
      max_n: 99_999,
      in_batch: 100_000,
    });
    expect(await db.query('SELECT size, finished_at FROM sluice_batches WHERE id = ?', [result.batchId])).toEqual([
      { size: 100_000, finished_at: null },
    ]);
  });

  it('stores each job’s optional fields as given and NULL where a job left them out, in a batch that mixes both', async () => {
    // Columns NULL for every job of an INSERT are left out of it (jobInsert.ts): mixing proves
    // a slice that needs them still writes NULL for the jobs without.
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'plain' },
      { name: 'retries', maxRetries: 7 },
      { name: 'backoff', backoff: { type: 'fixed', delayMs: 250 } },
      { name: 'keyed', idempotencyKey: 'k-1' },
      { name: 'plain2' },
    ]);
    const rows = await db.query<{
      name: string;
      max_retries: number | null;
      backoff: string | null;
      idempotency_key: string | null;
      batch_id: number;
    }>('SELECT name, max_retries, backoff, idempotency_key, batch_id FROM sluice_jobs ORDER BY id');
    expect(
      rows.map((r) => [
        r.name,
        r.max_retries,
        r.backoff === null ? null : JSON.parse(r.backoff),
        r.idempotency_key,
        r.batch_id,
      ]),
    ).toEqual([
      ['plain', null, null, null, batchId],
      ['retries', 7, null, null, batchId],
      ['backoff', null, { type: 'fixed', delayMs: 250 }, null, batchId],
      ['keyed', null, null, 'k-1', batchId],
      ['plain2', null, null, null, batchId],
    ]);
  });

  it('enqueue() writes one job with no batch and returns its id', async () => {
    const { id } = await db.sluice.enqueue({
      name: 'single',
      payload: { to: 'a@example.com' },
      queue: 'mail',
      priority: 2,
    });
    expect(id).toEqual(expect.any(Number));
    const row = await jobRow(db, id);
    expect(row).toMatchObject({
      id,
      name: 'single',
      queue: 'mail',
      priority: 2,
      batch_id: null,
      lock_id: '',
      locked_at: NO_CLAIM,
      retry_times: 0,
      max_retries: null,
    });
    expect(JSON.parse(row?.payload as string)).toEqual({ to: 'a@example.com' });
    expect(await countJobs()).toBe(1);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
  });

  it('an empty batch writes nothing and returns count 0', async () => {
    expect(await db.sluice.enqueueBatch([])).toMatchObject({ batchId: null, count: 0 });
    expect(await countRows(db, 'sluice_batches')).toBe(0);
  });
});
