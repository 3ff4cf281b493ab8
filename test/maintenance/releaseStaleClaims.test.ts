import { describe, expect, it } from 'vitest';
import { fromKnex, type Executor } from '../../src/db/executor.ts';
import { releaseDeadWorkers } from '../../src/maintenance/releaseDeadWorkers.ts';
import { releaseStaleClaims } from '../../src/maintenance/releaseStaleClaims.ts';
import { ago, countRows, dbNow, deadRow, fromNow, HOUR, insertJob, insertJobs, jobRow, MINUTE, SECOND, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('release_stale');

/** The sluice executor, except that `inject` runs once, right before the first UPDATE of the jobs table: a race made to happen. */
function beforeFirstJobsUpdate(inject: (real: Executor) => Promise<unknown>): Executor & { injected: boolean } {
  const real = fromKnex(db.sluice.knex);
  const exec = {
    ...real,
    injected: false,
    async write(sql: string, params?: readonly unknown[]) {
      if (!exec.injected && /^\s*UPDATE\s+`sluice_jobs`/.test(sql)) {
        exec.injected = true;
        await inject(real);
      }
      return real.write(sql, params);
    },
  };
  return exec;
}

describe('Maintainer.runOnce: releasing stale claims', () => {
  it('releases only claims older than the lock timeout, bumping retry_times and recording why', async () => {
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0 });
    const stale = [
      await insertJob(db, { lockId: 'host-1~a.1', lockedAt: ago(2 * HOUR) }),
      await insertJob(db, { lockId: 'host-1~a.2', lockedAt: ago(5 * MINUTE), retryTimes: 2 }),
    ];
    // A live claim (heartbeat 5 s ago), a free job, a free delayed job: none of these is the sweeper's.
    const fresh = await insertJob(db, { lockId: 'host-2~b.1', lockedAt: ago(5 * SECOND) });
    const free = await insertJob(db);
    const delayed = await insertJob(db, { runAt: fromNow(HOUR), retryTimes: 1, lastError: 'earlier' });
    const untouched = await Promise.all([fresh, free, delayed].map((id) => jobRow(db, id)));

    const result = await maintainer.runOnce();

    expect(result).toMatchObject({ leader: true, released: 2, deadLettered: 0 });
    expect(await jobRow(db, stale[0] as number)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 1 });
    expect(await jobRow(db, stale[1] as number)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 3 });
    expect((await jobRow(db, stale[0] as number))?.last_error).toMatch(/^claim host-1~a\.1 expired after 60000 ms without a heartbeat/);
    expect((await jobRow(db, stale[1] as number))?.last_error).toMatch(/^claim host-1~a\.2 expired/);
    expect(await Promise.all([fresh, free, delayed].map((id) => jobRow(db, id)))).toEqual(untouched);
    await maintainer.stop();
  });

  it('honours the lock timeout at its boundary', async () => {
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: 10 * MINUTE, jitterMs: 0 });
    const older = await insertJob(db, { lockId: 'h~c.1', lockedAt: ago(11 * MINUTE) });
    const younger = await insertJob(db, { lockId: 'h~c.2', lockedAt: ago(9 * MINUTE) });
    expect(await maintainer.runOnce()).toMatchObject({ released: 1 });
    expect(await jobRow(db, older)).toMatchObject({ lock_id: '', retry_times: 1 });
    expect(await jobRow(db, younger)).toMatchObject({ lock_id: 'h~c.2', retry_times: 0 });
    await maintainer.stop();
  });

  it('works through a backlog in batches: 35 stale claims with batchSize 10 are all released in one pass', async () => {
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, batchSize: 10, jitterMs: 0 });
    const ids: number[] = [];
    for (let i = 0; i < 35; i++) ids.push(await insertJob(db, { lockId: `h~d.${i}`, lockedAt: ago(HOUR + i * SECOND) }));
    const claimedFresh = await insertJobs(db, 3, { lockId: 'h~live.1', lockedAt: dbNow });

    expect(await maintainer.runOnce()).toMatchObject({ leader: true, released: 35, deadLettered: 0 });
    expect(await countRows(db, 'sluice_jobs', "lock_id = '' AND locked_at = '1970-01-01 00:00:01' AND retry_times = 1")).toBe(35);
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ? AND retry_times = 0', ['h~live.1'])).toBe(claimedFresh.length);
    // A second pass finds nothing more.
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, released: 0, deadLettered: 0 });
    await maintainer.stop();
  });

  it('dead-letters released jobs whose explicit max_retries is used up, and only those', async () => {
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0 });
    const exhausted = await insertJob(db, {
      name: 'billing',
      queue: 'money',
      payload: { invoice: 7 },
      lockId: 'h~e.1',
      lockedAt: ago(HOUR),
      retryTimes: 2,
      maxRetries: 2,
      idempotencyKey: 'inv-7',
    });
    const hasRetriesLeft = await insertJob(db, { lockId: 'h~e.2', lockedAt: ago(HOUR), retryTimes: 1, maxRetries: 5 });
    // NULL max_retries follows the job's definition, which only a worker knows: released, kept.
    const byDefinition = await insertJob(db, { lockId: 'h~e.3', lockedAt: ago(HOUR), retryTimes: 10, maxRetries: null });
    // Over its limit but not stale: not this pass's to judge.
    const live = await insertJob(db, { lockId: 'h~e.4', lockedAt: dbNow, retryTimes: 9, maxRetries: 2 });

    expect(await maintainer.runOnce()).toMatchObject({ leader: true, released: 3, deadLettered: 1 });

    expect(await jobRow(db, exhausted)).toBeUndefined();
    const dead = await deadRow(db, exhausted);
    expect(dead).toMatchObject({
      id: exhausted,
      name: 'billing',
      queue: 'money',
      retry_times: 3,
      max_retries: 2,
      idempotency_key: 'inv-7',
    });
    expect(JSON.parse(dead?.payload as string)).toEqual({ invoice: 7 });
    expect(dead?.last_error).toMatch(/^claim h~e\.1 expired/);
    expect(await jobRow(db, hasRetriesLeft)).toMatchObject({ lock_id: '', retry_times: 2 });
    expect(await jobRow(db, byDefinition)).toMatchObject({ lock_id: '', retry_times: 11 });
    expect(await jobRow(db, live)).toMatchObject({ lock_id: 'h~e.4', retry_times: 9 });
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(1);
    await maintainer.stop();
  });

  it('emits sweep:completed with the counts', async () => {
    const sluice = db.open();
    const completed: unknown[] = [];
    sluice.events.on('sweep:completed', (e) => completed.push(e));
    const maintainer = sluice.maintenance({ lockTimeoutMs: 1_000, jitterMs: 0 });
    await insertJob(db, { lockId: 'h~f.1', lockedAt: ago(HOUR), retryTimes: 0, maxRetries: 0 });
    await maintainer.runOnce();
    expect(completed).toEqual([expect.objectContaining({ holder: maintainer.holder, leader: true, released: 1, deadLettered: 1 })]);
    await maintainer.stop();
  });
  it('reads only the claimed rows of each queue, not the backlog: 30,000 free and delayed jobs cost nothing to walk past', async () => {
    // Two queues, each with a large free and delayed backlog and a few claims (some stale, some
    // of a dead worker). Handler_read_next counts index entries the session walked: a sweep that
    // scanned the backlog would read tens of thousands.
    for (const queue of ['mail', 'billing']) {
      await db.sluice.enqueueBatch(Array.from({ length: 10_000 }, (_, n) => ({ name: 'work', queue, priority: n % 3, delayMs: n % 2 === 0 ? HOUR : 0 })));
      await db.sluice.enqueueBatch(Array.from({ length: 5_000 }, () => ({ name: 'work', queue, delayMs: HOUR })));
    }
    await db.query('ANALYZE TABLE sluice_jobs');
    const stale = [await insertJob(db, { queue: 'mail', lockId: 'h-1~a.1', lockedAt: ago(HOUR) }), await insertJob(db, { queue: 'billing', lockId: 'h-1~a.2', lockedAt: ago(HOUR) })];
    const live = await insertJobs(db, 5, { queue: 'billing', lockId: 'h-2~b.1', lockedAt: dbNow });
    const ofDeadWorker = await insertJobs(db, 3, { queue: 'mail', lockId: 'h-3~c.1', lockedAt: dbNow });
    await db.query("INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES ('h-3~c', 'h', 3, 'mail', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR, 1000, 10, 10)");

    const { tables } = db.sluice;
    const sweep = await db.sluice.knex.transaction(async (trx) => {
      const exec = fromKnex(trx);
      await trx.raw('FLUSH STATUS');
      const dead = await releaseDeadWorkers(exec, tables, { missedHeartbeats: 3, batchSize: 100 });
      const expired = await releaseStaleClaims(exec, tables, { lockTimeoutMs: MINUTE, batchSize: 100, jitterMs: 0 });
      const [status] = (await trx.raw("SHOW SESSION STATUS LIKE 'Handler_read_next'")) as [{ Value: string }[]];
      return { dead, expired, readNext: Number(status[0]?.Value) };
    });

    expect(sweep.dead).toMatchObject({ workers: ['h-3~c'], released: 3 });
    expect(sweep.dead.ids.sort()).toEqual([...ofDeadWorker].sort());
    expect(sweep.expired.released).toBe(2);
    expect(sweep.expired.ids.sort()).toEqual([...stale].sort());
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ?', ['h-2~b.1'])).toBe(live.length);
    expect(sweep.readNext).toBeLessThan(100);
  });

  it('a worker found dead that heartbeats before its claims are released keeps them, and stays registered', async () => {
    const claims = await insertJobs(db, 3, { queue: 'mail', lockId: 'h-4~d.1', lockedAt: dbNow });
    await db.query("INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES ('h-4~d', 'h', 4, 'mail', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR, 1000, 10, 10)");
    // The worker resumes right between the sweep's staleness check and its first release.
    const exec = beforeFirstJobsUpdate((real) => real.write("UPDATE sluice_workers SET heartbeat_at = NOW(3) WHERE id = 'h-4~d'"));
    const dead = await releaseDeadWorkers(exec, db.sluice.tables, { missedHeartbeats: 3, batchSize: 2 });

    expect(exec.injected).toBe(true);
    expect(dead).toEqual({ workers: [], released: 0, ids: [] });
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ? AND retry_times = 0', ['h-4~d.1'])).toBe(claims.length);
    expect(await countRows(db, 'sluice_workers', 'id = ?', ['h-4~d'])).toBe(1);
  });

  it('a stale claim its worker releases between the sweep\'s find and its release stays free: no second retry, its error kept', async () => {
    const id = await insertJob(db, { lockId: 'h-5~e.1', lockedAt: ago(HOUR), retryTimes: 1 });
    // The stalled worker wakes up right after the sweep found its claim, and retries the job itself.
    const exec = beforeFirstJobsUpdate((real) =>
      real.write("UPDATE sluice_jobs SET lock_id = '', locked_at = DEFAULT, retry_times = 2, last_error = 'Error: the real failure' WHERE id = ? AND lock_id = 'h-5~e.1'", [id]),
    );
    const expired = await releaseStaleClaims(exec, db.sluice.tables, { lockTimeoutMs: MINUTE, batchSize: 100, jitterMs: 0 });

    expect(exec.injected).toBe(true);
    expect(expired.released).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 2, last_error: 'Error: the real failure' });
  });

  it('a dead worker registered under a non-ASCII id (before the fixed-width claim) is removed, and the sweep goes on', async () => {
    await db.query("INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES ('höst-6~f', 'höst', 6, 'mail', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR, 1000, 10, 10)");
    const claims = await insertJobs(db, 2, { queue: 'mail', lockId: 'h-7~g.1', lockedAt: dbNow });
    const dead = await releaseDeadWorkers(fromKnex(db.sluice.knex), db.sluice.tables, { missedHeartbeats: 3, batchSize: 10 });
    expect(dead).toEqual({ workers: ['höst-6~f'], released: 0, ids: [] });
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ?', ['h-7~g.1'])).toBe(claims.length);
  });
});
