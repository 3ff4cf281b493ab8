import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import type { SluiceEventMap } from '../../src/index.ts';
import { releaseDeadWorkers } from '../../src/maintenance/releaseDeadWorkers.ts';
import { countRows, dbNow, insertJobs, jobRow, SECOND } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { beforeFirstTransaction } from '../helpers/raceExecutor.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The dead-worker sweep judges liveness on one clock, its own: a worker is dead when its beat
 * (heartbeat_at, beats) has not changed between two of the sweeper's observations
 * missedHeartbeats × its interval apart — whatever clock wrote heartbeat_at (on a Galera cluster,
 * another node's).
 */
const db = useTestDatabase('dead_workers');

/** A worker row (heartbeat interval 1 s) whose times are written by `at` (SQL on the DB clock). */
async function registerWorker(id: string, at = 'NOW(3)'): Promise<void> {
  await db.query(
    `INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES (?, 'h', 1, 'mail', ${at}, ${at}, 1000, 10, 10)`,
    [id],
  );
}

/** One heartbeat of a worker, as workerRegistry writes it, on a server whose clock reads `at`. */
async function beat(id: string, at = 'NOW(3)'): Promise<void> {
  await db.query(`UPDATE sluice_workers SET heartbeat_at = ${at}, beats = beats + 1 WHERE id = ?`, [id]);
}

function task(clock = fakeClock()) {
  return releaseDeadWorkers(
    { db: fromKnex(db.sluice.knex), tables: db.sluice.tables },
    { missedHeartbeats: 2.5, batchSize: 100, clock: clock.now },
  );
}

describe('dead workers, judged on the sweeper’s own clock', () => {
  it('a live worker whose server writes its heartbeats an hour behind (or ahead) is never declared dead', async () => {
    await registerWorker('behind~a', 'NOW(3) - INTERVAL 1 HOUR');
    await registerWorker('ahead~b', 'NOW(3) + INTERVAL 1 HOUR');
    const claims = await insertJobs(db, 2, { queue: 'mail', lockId: 'a.1', lockedAt: dbNow });
    const clock = fakeClock();
    const sweep = task(clock);
    for (let pass = 0; pass < 10; pass++) {
      expect(await sweep.runOnce()).toEqual({ workers: 0, claims: 0, deadLettered: 0 });
      clock.advance(SECOND);
      await beat('behind~a', 'NOW(3) - INTERVAL 1 HOUR');
      await beat('ahead~b', 'NOW(3) + INTERVAL 1 HOUR');
    }
    expect(await countRows(db, 'sluice_workers')).toBe(2);
    for (const id of claims) expect(await jobRow(db, id)).toMatchObject({ lock_id: 'a.1', retry_times: 0 });
  });

  it('a worker whose beat stood still for missedHeartbeats of its intervals is dead, however fresh its heartbeat_at', async () => {
    await registerWorker('ahead~c', 'NOW(3) + INTERVAL 1 HOUR');
    const claims = await insertJobs(db, 3, { queue: 'mail', lockId: 'c.1', lockedAt: dbNow });
    const clock = fakeClock();
    const sweep = task(clock);
    // First sight: nothing is judged yet.
    expect(await sweep.runOnce()).toEqual({ workers: 0, claims: 0, deadLettered: 0 });
    clock.advance(2_499);
    expect(await sweep.runOnce()).toEqual({ workers: 0, claims: 0, deadLettered: 0 });
    clock.advance(1);
    expect(await sweep.runOnce()).toEqual({ workers: 1, claims: 3, deadLettered: 0 });
    for (const id of claims) expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
    expect(await countRows(db, 'sluice_workers')).toBe(0);
  });

  it('a standby that watched the registry releases a dead worker’s claims on its first pass as leader', async () => {
    await registerWorker('w~d');
    const claims = await insertJobs(db, 2, { queue: 'mail', lockId: 'd.1', lockedAt: dbNow });
    const clockA = fakeClock();
    const clockB = fakeClock();
    const a = db.open().maintenance({ jitterMs: 0, clock: clockA.now });
    const b = db.open().maintenance({ jitterMs: 0, clock: clockB.now });
    try {
      expect(await a.runOnce()).toMatchObject({ leader: true });
      expect(await b.runOnce()).toMatchObject({ leader: false });
      // The worker stops beating; b keeps watching while a leads, then a gives the lease up.
      clockA.advance(3 * SECOND);
      clockB.advance(3 * SECOND);
      expect(await b.runOnce()).toMatchObject({ leader: false });
      await a.stop();
      expect(await b.runOnce()).toMatchObject({
        leader: true,
        tasks: { releaseDeadWorkers: { workers: 1, claims: 2 } },
      });
      for (const id of claims) expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });

  it('a dead worker’s claim whose row another transaction holds is skipped and reported, the rest released at once; it is released once the lock goes', async () => {
    await registerWorker('w~e');
    const [frozen, ...others] = await insertJobs(db, 4, { queue: 'mail', lockId: 'e.1', lockedAt: dbNow });
    const sluice = db.open();
    const skipped: SluiceEventMap['maintenance:skipped'][] = [];
    sluice.events.on('maintenance:skipped', (e) => skipped.push(e));
    const clock = fakeClock();
    const maintainer = sluice.maintenance({ jitterMs: 0, clock: clock.now });
    // A worker frozen between its exactly-once DELETE and its COMMIT: the row stays locked.
    const holder = db.open({ poolMax: 1 });
    const trx = await holder.knex.transaction();
    try {
      await trx.raw('DELETE FROM sluice_jobs WHERE id = ?', [frozen as number]);
      await maintainer.runOnce();
      clock.advance(3 * SECOND);
      // With a lock wait this pass would stall for innodb_lock_wait_timeout (50 s), then retry.
      expect(await maintainer.runOnce()).toMatchObject({
        tasks: { releaseDeadWorkers: { workers: 0, claims: others.length } },
      });
      for (const id of others) expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
      expect(skipped).toEqual([
        expect.objectContaining({
          holder: maintainer.holder,
          task: 'releaseDeadWorkers',
          queue: 'mail',
          workerId: 'w~e',
          jobIds: [frozen],
          reason: expect.stringMatching(/another transaction holds/),
        }),
      ]);
      // The worker's row stays while a claim of it is left, so that the next pass tries again.
      expect(await countRows(db, 'sluice_workers', "id = 'w~e'")).toBe(1);
    } finally {
      await trx.rollback();
    }
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseDeadWorkers: { workers: 1, claims: 1 } } });
    expect(await jobRow(db, frozen as number)).toMatchObject({ lock_id: '', retry_times: 1 });
    await maintainer.stop();
  });

  it('a worker found dead that heartbeats before its claims are released keeps them, and stays registered', async () => {
    const claims = await insertJobs(db, 3, { queue: 'mail', lockId: 'd.1', lockedAt: dbNow });
    await registerWorker('h-4~d');
    // The worker resumes right between the sweep's staleness check and its first release.
    const exec = beforeFirstTransaction(db.sluice.knex, (real) =>
      real.write("UPDATE sluice_workers SET heartbeat_at = NOW(3), beats = beats + 1 WHERE id = 'h-4~d'"),
    );
    const clock = fakeClock();
    const task = releaseDeadWorkers(
      { db: exec, tables: db.sluice.tables },
      { missedHeartbeats: 3, batchSize: 2, clock: clock.now },
    );
    expect(await task.runOnce()).toEqual({ workers: 0, claims: 0, deadLettered: 0 });
    clock.advance(3 * SECOND);
    const dead = await task.runOnce();

    expect(exec.injected).toBe(true);
    expect(dead).toEqual({ workers: 0, claims: 0, deadLettered: 0 });
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ? AND retry_times = 0', ['d.1'])).toBe(claims.length);
    expect(await countRows(db, 'sluice_workers', 'id = ?', ['h-4~d'])).toBe(1);
  });

  it('a dead worker registered under a non-ASCII id (before the fixed-width claim) is removed, and the sweep goes on', async () => {
    await registerWorker('höst-6~f');
    const claims = await insertJobs(db, 2, { queue: 'mail', lockId: 'h-7~g.1', lockedAt: dbNow });
    const clock = fakeClock();
    const task = releaseDeadWorkers(
      { db: fromKnex(db.sluice.knex), tables: db.sluice.tables },
      { missedHeartbeats: 3, batchSize: 10, clock: clock.now },
    );
    await task.runOnce();
    clock.advance(3 * SECOND);
    const dead = await task.runOnce();
    expect(dead).toEqual({ workers: 1, claims: 0, deadLettered: 0 });
    expect(await countRows(db, 'sluice_workers', 'id = ?', ['höst-6~f'])).toBe(0);
    expect(await countRows(db, 'sluice_jobs', 'lock_id = ?', ['h-7~g.1'])).toBe(claims.length);
  });
});
