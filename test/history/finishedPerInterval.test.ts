import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { finishedPerInterval } from '../../src/history/finishedPerInterval.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The dashboard's throughput: jobs finished (history) and died (dead jobs) per bucket on the DB
 * clock, oldest bucket first, nothing outside the window, and a read capped at maxRows says so.
 */
const db = useTestDatabase('finished_per_interval');

async function history(id: number, secondsAgo: number): Promise<void> {
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at)
     VALUES (?, 'q', 'n', '{}', 0, NOW(3) - INTERVAL 1 DAY, NOW(3) - INTERVAL ? SECOND)`,
    [id, secondsAgo],
  );
}

describe('finishedPerInterval', () => {
  it('counts finished and dead jobs per bucket, oldest first, within the window', async () => {
    for (const [id, ago] of [
      [1, 5],
      [2, 30],
      [3, 65],
      [4, 125],
      [5, 125],
      [6, 400],
    ] as const)
      await history(id, ago);
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (50, 'q', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 70 SECOND)`,
    );
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    const result = await finishedPerInterval(executor, db.sluice.tables, { bucketSeconds: 60, buckets: 5 });
    expect(result).toEqual({ bucketSeconds: 60, finished: [0, 0, 2, 1, 2], died: [0, 0, 0, 1, 0], capped: false });
    const capped = await finishedPerInterval(executor, db.sluice.tables, { bucketSeconds: 60, buckets: 5, maxRows: 3 });
    expect(capped).toMatchObject({ finished: [0, 0, 0, 1, 2], capped: true });
    await expect(finishedPerInterval(executor, db.sluice.tables, { bucketSeconds: 0, buckets: 5 })).rejects.toThrow(
      /option bucketSeconds must be an integer/,
    );
  });
});
