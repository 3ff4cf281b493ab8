import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { finishedPerInterval } from '../../src/history/finishedPerInterval.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The dashboard's throughput: jobs finished (history) and died (dead jobs) per bucket on the DB
 * clock, oldest bucket first, nothing outside the window, and a read capped at maxRows says so; of
 * every queue or of one.
 */
const db = useTestDatabase('finished_per_interval');

async function history(id: number, secondsAgo: number, queue = 'q'): Promise<void> {
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at)
     VALUES (?, ?, 'n', '{}', 0, NOW(3) - INTERVAL 1 DAY, NOW(3) - INTERVAL ? SECOND)`,
    [id, queue, secondsAgo],
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

  it("counts one queue's jobs, leaving the others out", async () => {
    for (const [id, ago, queue] of [
      [11, 5, 'mail'],
      [12, 65, 'mail'],
      [13, 5, 'images'],
      [14, 5, 'images'],
    ] as const)
      await history(id, ago, queue);
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (60, 'mail', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 10 SECOND),
              (61, 'images', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 10 SECOND)`,
    );
    const mail = await db.sluice.history.throughput({ bucketSeconds: 60, buckets: 3, queue: 'mail' });
    expect(mail).toEqual({ bucketSeconds: 60, finished: [0, 1, 1], died: [0, 0, 1], capped: false });
    // Its finished jobs are found among every queue's: a cap counts what it read of them all.
    const capped = await db.sluice.history.throughput({ bucketSeconds: 60, buckets: 3, queue: 'mail', maxRows: 2 });
    expect(capped).toMatchObject({ finished: [0, 0, 0], capped: true });
    await expect(db.sluice.history.throughput({ queue: 'no spaces' })).rejects.toThrow(
      /option queue must be a queue name/,
    );
  });
});
