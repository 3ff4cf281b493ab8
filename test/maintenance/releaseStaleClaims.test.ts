import { describe, expect, it } from 'vitest';
import { type Executor, fromKnex } from '../../src/db/executor.ts';
import { releaseDeadWorkers } from '../../src/maintenance/releaseDeadWorkers.ts';
import { releaseStaleClaims } from '../../src/maintenance/releaseStaleClaims.ts';
import {
  ago,
  countRows,
  dbNow,
  deadRow,
  fromNow,
  HOUR,
  insertJob,
  insertJobs,
  jobRow,
  MINUTE,
  NO_CLAIM,
  SECOND,
} from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { beforeFirstTransaction } from '../helpers/raceExecutor.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('release_stale');

/** What the sweep tasks take when a test calls them directly, on a clock the test moves. */
function taskDb(exec: Executor = fromKnex(db.sluice.knex)) {
  return { db: exec, tables: db.sluice.tables };
}

/** Registers a worker row (heartbeat interval 1 s) whose heartbeat_at is `heartbeatAt` (SQL on the DB clock). */
async function registerWorker(id: string, heartbeatAt = 'NOW(3)'): Promise<void> {
  await db.query(
    `INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES (?, 'h', 1, 'mail', ${heartbeatAt}, ${heartbeatAt}, 1000, 10, 10)`,
    [id],
  );
}

describe('Maintainer.runOnce: releasing stale claims', () => {
  it("releases only claims unchanged for the lock timeout of the sweeper's own clock, bumping retry_times and recording why", async () => {
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
    // Two claims no heartbeat moves, however old their locked_at (written on some server's clock).
    const stale = [
      await insertJob(db, { lockId: 'host-1~a.1', lockedAt: ago(2 * HOUR) }),
      await insertJob(db, { lockId: 'host-1~a.2', lockedAt: dbNow, retryTimes: 2 }),
    ];
    // A live claim (its heartbeat moves locked_at), a free job, a free delayed job: none of these is the sweeper's.
    const live = await insertJob(db, { lockId: 'host-2~b.1', lockedAt: ago(5 * SECOND) });
    const free = await insertJob(db);
    const delayed = await insertJob(db, { runAt: fromNow(HOUR), retryTimes: 1, lastError: 'earlier' });

    // First sight: nothing has been seen unchanged for any time yet, so nothing is released —
    // not even a claim whose locked_at says two hours ago.
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: 0 } } });
    clock.advance(MINUTE);
    await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) WHERE id = ?', [live]);
    const untouched = await Promise.all([live, free, delayed].map((id) => jobRow(db, id)));

    const result = await maintainer.runOnce();

    expect(result).toMatchObject({ leader: true, tasks: { releaseStaleClaims: { claims: 2, deadLettered: 0 } } });
    expect(await jobRow(db, stale[0] as number)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 1 });
    expect(await jobRow(db, stale[1] as number)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 3 });
    expect((await jobRow(db, stale[0] as number))?.last_error).toMatch(
      /^claim host-1~a\.1 expired after 60000 ms without a heartbeat/,
    );
    expect((await jobRow(db, stale[1] as number))?.last_error).toMatch(/^claim host-1~a\.2 expired/);
    expect(await Promise.all([live, free, delayed].map((id) => jobRow(db, id)))).toEqual(untouched);
    await maintainer.stop();
  });

  it('honours the lock timeout at its boundary, on its own clock', async () => {
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: 10 * MINUTE, jitterMs: 0, clock: clock.now });
    const id = await insertJob(db, { lockId: 'h~c.1', lockedAt: ago(11 * MINUTE) });
    await maintainer.runOnce();
    clock.advance(10 * MINUTE - 1);
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: 0 } } });
    expect(await jobRow(db, id)).toMatchObject({ lock_id: 'h~c.1', retry_times: 0 });
    clock.advance(1);
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: 1 } } });
    expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
    await maintainer.stop();
  });

  it("judges a claim by whether it changed, never by its locked_at against the sweeper's NOW(3): skewed servers", async () => {
    // Claims written by servers whose clocks are an hour behind and an hour ahead of this one's.
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
    const behindLive = await insertJob(db, { lockId: 'behind-1~a.1', lockedAt: ago(HOUR) });
    const aheadLive = await insertJob(db, { lockId: 'ahead-1~b.1', lockedAt: fromNow(HOUR) });
    const aheadDead = await insertJob(db, { lockId: 'ahead-2~c.1', lockedAt: fromNow(HOUR) });
    // Passes at 0, 20 and 40 s of the sweeper's clock: nobody's claim has stood still for a minute.
    for (let pass = 0; pass < 3; pass++) {
      expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: 0 } } });
      clock.advance(20 * SECOND);
      // The live workers heartbeat, each on its own server's clock.
      await db.query(`UPDATE sluice_jobs SET locked_at = ${ago(HOUR).sql} WHERE id = ?`, [behindLive]);
      await db.query(`UPDATE sluice_jobs SET locked_at = ${fromNow(HOUR).sql} WHERE id = ?`, [aheadLive]);
    }
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: 1 } } });
    expect(await jobRow(db, aheadDead)).toMatchObject({ lock_id: '', retry_times: 1 });
    for (const id of [behindLive, aheadLive]) expect(await jobRow(db, id)).toMatchObject({ retry_times: 0 });
    await maintainer.stop();
  });

  it('works through a backlog in batches: 35 stale claims with batchSize 10 are all released in one pass', async () => {
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, batchSize: 10, jitterMs: 0, clock: clock.now });
    const ids: number[] = [];
    for (let i = 0; i < 35; i++)
      ids.push(await insertJob(db, { lockId: `h~d.${i}`, lockedAt: ago(HOUR + i * SECOND) }));
    // One claim of 12 jobs: more than a batch.
    const wide = await insertJobs(db, 12, { lockId: 'h~wide.1', lockedAt: ago(HOUR) });
    const claimedFresh = await insertJobs(db, 3, { lockId: 'h~live.1', lockedAt: dbNow });
    await maintainer.runOnce();
    clock.advance(MINUTE);
    await db.query("UPDATE sluice_jobs SET locked_at = NOW(3) + INTERVAL 1 SECOND WHERE lock_id = 'h~live.1'");

    expect(await maintainer.runOnce()).toMatchObject({
      leader: true,
      tasks: { releaseStaleClaims: { claims: 35 + wide.length, deadLettered: 0 } },
    });
    expect(
      await countRows(db, 'sluice_jobs', "lock_id = '' AND locked_at = '1970-01-01 00:00:01' AND retry_times = 1"),
    ).toBe(35 + wide.length);
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ? AND retry_times = 0', ['h~live.1'])).toBe(
      claimedFresh.length,
    );
    // A second pass finds nothing more.
    expect(await maintainer.runOnce()).toMatchObject({
      leader: true,
      tasks: { releaseStaleClaims: { claims: 0, deadLettered: 0 } },
    });
    await maintainer.stop();
  });

  it('dead-letters released jobs whose explicit max_retries is used up, and only those', async () => {
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
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
    const byDefinition = await insertJob(db, {
      lockId: 'h~e.3',
      lockedAt: ago(HOUR),
      retryTimes: 10,
      maxRetries: null,
    });
    // Over its limit but not stale (its worker heartbeats): not this pass's to judge.
    const live = await insertJob(db, { lockId: 'h~e.4', lockedAt: dbNow, retryTimes: 9, maxRetries: 2 });
    await maintainer.runOnce();
    clock.advance(MINUTE);
    await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) + INTERVAL 1 SECOND WHERE id = ?', [live]);

    expect(await maintainer.runOnce()).toMatchObject({
      leader: true,
      tasks: { releaseStaleClaims: { claims: 3, deadLettered: 1 } },
    });

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

  it('emits maintenance:completed with the counts, and their sum as changed', async () => {
    const sluice = db.open();
    const clock = fakeClock();
    const completed: unknown[] = [];
    sluice.events.on('maintenance:completed', (e) => completed.push(e));
    const maintainer = sluice.maintenance({ lockTimeoutMs: 1_000, jitterMs: 0, clock: clock.now });
    await insertJob(db, { lockId: 'h~f.1', lockedAt: ago(HOUR), retryTimes: 0, maxRetries: 0 });
    await maintainer.runOnce();
    clock.advance(1_000);
    await maintainer.runOnce();
    expect(completed[1]).toEqual(
      expect.objectContaining({
        holder: maintainer.holder,
        leader: true,
        changed: 2,
        tasks: expect.objectContaining({ releaseStaleClaims: { claims: 1, deadLettered: 1 } }),
      }),
    );
    await maintainer.stop();
  });
  it('reads only the claimed rows of each queue, not the backlog: 30,000 free and delayed jobs cost nothing to walk past', async () => {
    // Two queues, each with a large free and delayed backlog and a few claims (some stale, some
    // of a dead worker). Handler_read_next counts index entries the session walked: a sweep that
    // scanned the backlog would read tens of thousands.
    for (const queue of ['mail', 'billing']) {
      await db.sluice.enqueueBatch(
        Array.from({ length: 10_000 }, (_, n) => ({
          name: 'work',
          queue,
          priority: n % 3,
          delayMs: n % 2 === 0 ? HOUR : 0,
        })),
      );
      await db.sluice.enqueueBatch(Array.from({ length: 5_000 }, () => ({ name: 'work', queue, delayMs: HOUR })));
    }
    await db.query('ANALYZE TABLE sluice_jobs');
    const stale = [
      await insertJob(db, { queue: 'mail', lockId: 'h-1~a.1', lockedAt: ago(HOUR) }),
      await insertJob(db, { queue: 'billing', lockId: 'h-1~a.2', lockedAt: ago(HOUR) }),
    ];
    const live = await insertJobs(db, 5, { queue: 'billing', lockId: 'h-2~b.1', lockedAt: dbNow });
    const ofDeadWorker = await insertJobs(db, 3, { queue: 'mail', lockId: 'c.1', lockedAt: dbNow });
    await registerWorker('h-3~c');

    const clock = fakeClock();
    const sweep = await db.sluice.knex.transaction(async (trx) => {
      const tasks = taskDb(fromKnex(trx));
      const deadTask = releaseDeadWorkers(tasks, { missedHeartbeats: 3, batchSize: 100, clock: clock.now });
      const staleTask = releaseStaleClaims(tasks, {
        lockTimeoutMs: MINUTE,
        batchSize: 100,
        jitterMs: 0,
        clock: clock.now,
      });
      await trx.raw('FLUSH STATUS');
      await deadTask.runOnce();
      await staleTask.runOnce();
      clock.advance(MINUTE);
      await trx.raw("UPDATE sluice_jobs SET locked_at = NOW(3) + INTERVAL 1 SECOND WHERE lock_id = 'h-2~b.1'");
      const dead = await deadTask.runOnce();
      const expired = await staleTask.runOnce();
      const [status] = (await trx.raw("SHOW SESSION STATUS LIKE 'Handler_read_next'")) as [{ Value: string }[]];
      return { dead, expired, readNext: Number(status[0]?.Value) };
    });

    expect(sweep.dead).toEqual({ workers: 1, claims: 3, deadLettered: 0 });
    expect(sweep.expired).toEqual({ claims: 2, deadLettered: 0 });
    for (const id of [...ofDeadWorker, ...stale])
      expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
    expect(await countRows(db, 'sluice_workers', 'id = ?', ['h-3~c'])).toBe(0);
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ?', ['h-2~b.1'])).toBe(live.length);
    // Two passes, each walking the claimed rows only (a dozen), not the 30,000 behind them.
    expect(sweep.readNext).toBeLessThan(200);
  });

  it("a stale claim its worker releases between the sweep's find and its release stays free: no second retry, its error kept", async () => {
    const id = await insertJob(db, { lockId: 'h-5~e.1', lockedAt: ago(HOUR), retryTimes: 1 });
    // The stalled worker wakes up right after the sweep found its claim, and retries the job itself.
    const exec = beforeFirstTransaction(db.sluice.knex, (real) =>
      real.write(
        "UPDATE sluice_jobs SET lock_id = '', locked_at = DEFAULT, retry_times = 2, last_error = 'Error: the real failure' WHERE id = ? AND lock_id = 'h-5~e.1'",
        [id],
      ),
    );
    const clock = fakeClock();
    const task = releaseStaleClaims(taskDb(exec), {
      lockTimeoutMs: MINUTE,
      batchSize: 100,
      jitterMs: 0,
      clock: clock.now,
    });
    await task.runOnce();
    clock.advance(MINUTE);
    const expired = await task.runOnce();

    expect(exec.injected).toBe(true);
    expect(expired.claims).toBe(0);
    expect(await jobRow(db, id)).toMatchObject({
      lock_id: '',
      locked_at: NO_CLAIM,
      retry_times: 2,
      last_error: 'Error: the real failure',
    });
  });
});
