import { beforeAll, describe, expect, it } from 'vitest';
import { type JobSpec, JobValidationError } from '../../src/index.ts';
import { countRows, jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('enqueue_batch');

async function countJobs(): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs');
  return Number(row?.n);
}

async function dbNow(): Promise<Date> {
  const [row] = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
  return (row as { now: Date }).now;
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
  it('rejects a 10,000-job batch whose job 9,999 is bad, naming that index, and writes nothing', async () => {
    const jobs = Array.from({ length: 10_000 }, (_, n) => ({ name: 'work', payload: { n } }));
    jobs[9_999] = { name: 'work', payload: { n: 10n } as never };
    const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 9_999, field: 'payload', code: 'SLUICE_JOB_INVALID' });
    expect((error as Error).message).toContain('job 9999: payload is not JSON-serialisable');
    expect(await countJobs()).toBe(0);
    expect(await db.query('SELECT * FROM sluice_batches')).toEqual([]);
  });

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

  describe('rejects an invalid job, naming its index and field, and writes nothing', () => {
    const cases: {
      what: string;
      job: Record<string, unknown>;
      field: string;
      text: string;
      options?: { maxPayloadBytes: number };
    }[] = [
      {
        what: 'a name with a space',
        job: { name: 'bad name' },
        field: 'name',
        text: 'job 3: name must be 1–128 characters',
      },
      { what: 'a missing name', job: { payload: {} }, field: 'name', text: 'job 3: name' },
      {
        what: 'a queue too long',
        job: { name: 'work', queue: 'q'.repeat(65) },
        field: 'queue',
        text: 'job 3: queue must be 1–64 characters',
      },
      {
        what: 'a fractional priority',
        job: { name: 'work', priority: 1.5 },
        field: 'priority',
        text: 'job 3: priority must be an integer',
      },
      {
        what: 'a priority out of range',
        job: { name: 'work', priority: 40_000 },
        field: 'priority',
        text: 'job 3: priority',
      },
      {
        what: 'runAt as a string',
        job: { name: 'work', runAt: '2030-01-01' },
        field: 'runAt',
        text: 'job 3: runAt must be a valid Date',
      },
      {
        what: 'an invalid Date',
        job: { name: 'work', runAt: new Date('nope') },
        field: 'runAt',
        text: 'job 3: runAt must be a valid Date',
      },
      {
        what: 'delayMs and runAt together',
        job: { name: 'work', runAt: new Date(), delayMs: 10 },
        field: 'runAt',
        text: 'job 3: runAt and delayMs cannot both be set',
      },
      {
        what: 'a negative delayMs',
        job: { name: 'work', delayMs: -1 },
        field: 'delayMs',
        text: 'job 3: delayMs must be',
      },
      {
        what: 'a negative maxRetries',
        job: { name: 'work', maxRetries: -1 },
        field: 'maxRetries',
        text: 'job 3: maxRetries must be an integer',
      },
      {
        what: 'an unknown field',
        job: { name: 'work', prio: 1 },
        field: 'prio',
        text: 'job 3: prio is not a job field',
      },
      {
        what: 'an empty idempotencyKey',
        job: { name: 'work', idempotencyKey: '' },
        field: 'idempotencyKey',
        text: 'job 3: idempotencyKey',
      },
      {
        what: 'a payload over maxPayloadBytes',
        job: { name: 'work', payload: { text: 'x'.repeat(200) } },
        field: 'payload',
        text: 'job 3: payload is 211 bytes as JSON, over the limit of 100',
        options: { maxPayloadBytes: 100 },
      },
    ];

    it.each(cases)('$what', async ({ job, field, text, options }) => {
      const sluice = options ? db.open(options) : db.sluice;
      const jobs: JobSpec[] = [...numbered(3, { payload: { small: true } }), job as unknown as JobSpec, ...numbered(3)];
      const error = await sluice.enqueueBatch(jobs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 3, field, code: 'SLUICE_JOB_INVALID' });
      expect((error as Error).message).toContain(text);
      expect(await countJobs()).toBe(0);
      expect(await countRows(db, 'sluice_batches')).toBe(0);
    });

    it('an idempotencyKey repeated inside the batch (same queue)', async () => {
      const jobs: JobSpec[] = [
        { name: 'work', idempotencyKey: 'k1' },
        { name: 'work', idempotencyKey: 'k2' },
        { name: 'work', idempotencyKey: 'k1', queue: 'other' },
        { name: 'work', idempotencyKey: 'k2' },
      ];
      const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 3, field: 'idempotencyKey' });
      expect((error as Error).message).toContain('job 3: idempotencyKey repeats a key');
      expect(await countJobs()).toBe(0);
      expect(await countRows(db, 'sluice_batches')).toBe(0);
    });

    it('a single enqueue() with a bad job names index 0 and writes nothing', async () => {
      const error = await db.sluice.enqueue({ name: 'work', priority: 'high' as never }).catch((e: unknown) => e);
      expect(error).toMatchObject({ index: 0, field: 'priority', code: 'SLUICE_JOB_INVALID' });
      expect(await countJobs()).toBe(0);
    });
  });

  it('computes run_at from delayMs on the database clock', async () => {
    const before = await dbNow();
    await db.sluice.enqueueBatch([
      { name: 'later', delayMs: 90_000, priority: -7 },
      { name: 'now', priority: 12 },
    ]);
    const after = await dbNow();
    const rows = await db.query<{ name: string; run_at: Date; priority: number; created_at: Date }>(
      'SELECT name, run_at, priority, created_at FROM sluice_jobs ORDER BY name',
    );
    const later = rows.find((r) => r.name === 'later');
    const now = rows.find((r) => r.name === 'now');
    expect(later?.priority).toBe(-7);
    expect(now?.priority).toBe(12);
    expect(later?.run_at.getTime()).toBeGreaterThanOrEqual(before.getTime() + 90_000);
    expect(later?.run_at.getTime()).toBeLessThanOrEqual(after.getTime() + 90_000);
    expect(later?.run_at.getTime()).toBe((later?.created_at.getTime() ?? 0) + 90_000);
    expect(now?.run_at.getTime()).toBeGreaterThanOrEqual(before.getTime());
    expect(now?.run_at.getTime()).toBeLessThanOrEqual(after.getTime());
  });

  it('reads the time from the database, not from the application', async () => {
    // One connection whose clock is pinned far from the host's: only NOW(3) on the server can
    // produce these values.
    const sluice = db.open({ poolMax: 1 });
    let id: number;
    try {
      await sluice.knex.raw("SET timestamp = UNIX_TIMESTAMP('2031-05-06 07:08:09.123')");
      await sluice.enqueueBatch([{ name: 'pinned', delayMs: 1_500 }]);
      ({ id } = await sluice.enqueue({ name: 'pinned-single', delayMs: 250 }));
    } finally {
      await sluice.knex.raw('SET timestamp = DEFAULT');
    }
    const rows = await db.query<{ name: string; run_at: Date; created_at: Date }>(
      'SELECT name, run_at, created_at FROM sluice_jobs ORDER BY id',
    );
    expect(rows).toEqual([
      {
        name: 'pinned',
        run_at: new Date('2031-05-06T07:08:10.623Z'),
        created_at: new Date('2031-05-06T07:08:09.123Z'),
      },
      {
        name: 'pinned-single',
        run_at: new Date('2031-05-06T07:08:09.373Z'),
        created_at: new Date('2031-05-06T07:08:09.123Z'),
      },
    ]);
    expect((await jobRow(db, id))?.name).toBe('pinned-single');
  });

  it('stores an explicit runAt exactly, to the millisecond', async () => {
    const runAt = new Date('2033-02-03T04:05:06.789Z');
    await db.sluice.enqueueBatch([
      { name: 'at', runAt, priority: 3, maxRetries: 4, queue: 'mail', idempotencyKey: 'mail-1' },
    ]);
    const rows = await db.query(
      'SELECT name, queue, run_at, priority, max_retries, idempotency_key, lock_id, retry_times FROM sluice_jobs',
    );
    expect(rows).toEqual([
      {
        name: 'at',
        queue: 'mail',
        run_at: runAt,
        priority: 3,
        max_retries: 4,
        idempotency_key: 'mail-1',
        lock_id: '',
        retry_times: 0,
      },
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
