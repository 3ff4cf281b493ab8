import { describe, expect, it } from 'vitest';
import { ago, fromNow, HOUR, insertJob, MINUTE, SECOND } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('queue_stats');

async function insertDead(queue: string, id: number): Promise<void> {
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
     VALUES (?, ?, 'work', '{}', 0, 4, 3, 'Error: gave up', NOW(3) - INTERVAL 1 HOUR, NOW(3))`,
    [id, queue],
  );
}

describe('sluice.queues.depth', () => {
  it('says which counts stopped at max, and reads one queue when asked', async () => {
    for (let i = 0; i < 5; i++) await insertJob(db, { queue: 'big' });
    await insertJob(db, { queue: 'small', runAt: fromNow(HOUR) });
    const [big, small] = await db.sluice.queues.depth({ max: 3 });
    expect(big).toMatchObject({ queue: 'big', ready: { count: 3, exact: false }, notDue: { count: 0, exact: true } });
    expect(small).toMatchObject({
      queue: 'small',
      ready: { count: 0, exact: true },
      notDue: { count: 1, exact: true },
    });
    expect(await db.sluice.queues.depth({ queue: 'small' })).toEqual([small]);
    expect(await db.sluice.queues.list()).toEqual({ queues: ['big', 'small'], next: null });
  });

  it('keeps the earlier flat names working as deprecated aliases of the namespaces', async () => {
    const { batchId } = await db.sluice.enqueueBatch([{ name: 'work', queue: 'held' }]);
    expect(await db.sluice.batch(batchId as number)).toEqual(await db.sluice.batches.get(batchId as number));
    await db.sluice.pauseQueue('held');
    expect(await db.sluice.pausedQueues()).toEqual(await db.sluice.queues.paused());
    expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['held']);
    await db.sluice.resumeQueue('held');
    expect(await db.sluice.queues.paused()).toEqual([]);
    expect(await db.sluice.workers()).toEqual(await db.sluice.workers.list());
    expect(await db.sluice.schedules([])).toEqual([]);
  });
});

describe('sluice.stats (deprecated: queues.depth flattened)', () => {
  it('is empty when nothing is queued', async () => {
    expect(await db.sluice.stats()).toEqual([]);
  });

  it('counts ready, delayed, running and dead jobs per queue, with the age of the oldest ready job', async () => {
    // mail: 3 ready (oldest due an hour ago), 2 delayed, 2 running (one of them with a future run_at), 2 dead.
    await insertJob(db, { queue: 'mail', runAt: ago(HOUR) });
    await insertJob(db, { queue: 'mail', runAt: ago(MINUTE) });
    await insertJob(db, { queue: 'mail' });
    await insertJob(db, { queue: 'mail', runAt: fromNow(HOUR) });
    await insertJob(db, { queue: 'mail', runAt: fromNow(MINUTE), retryTimes: 1 });
    await insertJob(db, { queue: 'mail', runAt: ago(2 * HOUR), lockId: 'h~a.1', lockedAt: ago(SECOND) });
    await insertJob(db, { queue: 'mail', runAt: fromNow(HOUR), lockId: 'h~a.1', lockedAt: ago(SECOND) });
    await insertDead('mail', 900_001);
    await insertDead('mail', 900_002);
    // reports: only delayed jobs, so no oldest-ready age.
    await insertJob(db, { queue: 'reports', runAt: fromNow(10 * MINUTE) });
    // archive: only dead jobs.
    await insertDead('archive', 900_003);

    const stats = await db.sluice.stats();
    expect(stats.map((s) => s.queue)).toEqual(['archive', 'mail', 'reports']);
    const [archive, mail, reports] = stats;
    expect(archive).toEqual({ queue: 'archive', ready: 0, delayed: 0, running: 0, dead: 1, oldestReadyMs: null });
    expect(reports).toEqual({ queue: 'reports', ready: 0, delayed: 1, running: 0, dead: 0, oldestReadyMs: null });
    expect(mail).toMatchObject({ queue: 'mail', ready: 3, delayed: 2, running: 2, dead: 2 });
    // The oldest ready job was due an hour ago (a claimed job due two hours ago does not count).
    expect(mail?.oldestReadyMs).toBeGreaterThanOrEqual(HOUR);
    expect(mail?.oldestReadyMs).toBeLessThan(HOUR + 5 * MINUTE);
  });

  it('measures the oldest-ready age on the database clock', async () => {
    const sluice = db.open({ poolMax: 1 });
    try {
      await sluice.knex.raw("SET timestamp = UNIX_TIMESTAMP('2031-05-06 07:08:09.123')");
      await sluice.knex.raw(
        "INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at) VALUES ('q', 'work', '{}', '2031-05-06 07:07:59.000', NOW(3))",
      );
      expect(await sluice.stats()).toEqual([
        { queue: 'q', ready: 1, delayed: 0, running: 0, dead: 0, oldestReadyMs: 10_123 },
      ]);
    } finally {
      await sluice.knex.raw('SET timestamp = DEFAULT');
    }
  });

  it('follows jobs through the queue: a failed job counted as dead, a re-driven one ready again and no longer dead', async () => {
    const { id } = await db.sluice.enqueue({ name: 'work', queue: 'flow', maxRetries: 0 });
    expect(await db.sluice.stats()).toEqual([
      { queue: 'flow', ready: 1, delayed: 0, running: 0, dead: 0, oldestReadyMs: expect.any(Number) },
    ]);

    await db.query("UPDATE sluice_jobs SET lock_id = 'h~b.1', locked_at = NOW(3) WHERE id = ?", [id]);
    expect(await db.sluice.stats()).toMatchObject([
      { queue: 'flow', ready: 0, running: 1, dead: 0, oldestReadyMs: null },
    ]);

    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
       SELECT id, queue, name, payload, priority, 1, 0, 'Error: no', created_at, NOW(3) FROM sluice_jobs WHERE id = ?`,
      [id],
    );
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [id]);
    expect(await db.sluice.stats()).toEqual([
      { queue: 'flow', ready: 0, delayed: 0, running: 0, dead: 1, oldestReadyMs: null },
    ]);

    expect(await db.sluice.deadJobs.redrive({ queue: 'flow' })).toEqual({ redriven: 1 });
    expect(await db.sluice.stats()).toEqual([
      { queue: 'flow', ready: 1, delayed: 0, running: 0, dead: 0, oldestReadyMs: expect.any(Number) },
    ]);
  });
});
