import { describe, expect, it } from 'vitest';
import { jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** The run_at enqueueBatch and enqueue() store: from delayMs or runAt, on the database's clock. */
const db = useTestDatabase('enqueue_run_at');

async function dbNow(): Promise<Date> {
  const [row] = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
  return (row as { now: Date }).now;
}

describe('enqueueBatch', () => {
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
});
