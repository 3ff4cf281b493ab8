import { describe, expect, it } from 'vitest';
import type { SluiceEventMap } from '../../src/index.ts';
import { ago, countRows, HOUR, insertJobs, jobRow, MINUTE } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Issue 15, finding 14: a worker frozen mid-commit (SIGSTOP, a paused VM) holds its rows' locks
 * until its transaction ends. No maintenance statement may wait on them — the release UPDATEs
 * waited innodb_lock_wait_timeout (50 s) six times over and no pass completed — and sluice's own
 * sessions bound such a transaction (MariaDB idle_transaction_timeout). The process-level version
 * (a real SIGSTOPped worker) is in test/process/frozenWorker.test.ts.
 */
const db = useTestDatabase('locked_rows');

/**
 * An open transaction on a connection of its own that has run a worker's fenced completion DELETE
 * on the given jobs of one claim (completeJobs' statement) and not committed: their rows stay locked.
 */
async function holdRows(lockId: string, ids: readonly number[]) {
  const holder = db.open({ poolMax: 1 });
  const trx = await holder.knex.transaction();
  await trx.raw('DELETE FROM sluice_jobs WHERE lock_id = ? AND id IN (?)', [lockId, [...ids]]);
  return trx;
}

describe('maintenance never waits on a row someone else holds', () => {
  it('a stale claim whose rows another transaction holds is skipped and reported; the other stale claims are released in the same pass', async () => {
    const locked = await insertJobs(db, 2, { lockId: 'frozen~a.1', lockedAt: ago(HOUR) });
    const free = await insertJobs(db, 3, { lockId: 'dead~b.1', lockedAt: ago(HOUR) });
    // One claim statement gives all its jobs one locked_at.
    await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) - INTERVAL 1 HOUR');
    const sluice = db.open();
    const skipped: SluiceEventMap['maintenance:skipped'][] = [];
    sluice.events.on('maintenance:skipped', (e) => skipped.push(e));
    const clock = fakeClock();
    const maintainer = sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
    await maintainer.runOnce();
    clock.advance(MINUTE);
    const trx = await holdRows('frozen~a.1', locked);
    try {
      expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: free.length } } });
      for (const id of free) expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });
      for (const id of locked) expect(await jobRow(db, id)).toMatchObject({ lock_id: 'frozen~a.1', retry_times: 0 });
      expect(skipped).toEqual([
        expect.objectContaining({
          task: 'releaseStaleClaims',
          queue: 'default',
          workerId: null,
          jobIds: locked,
          reason: expect.stringMatching(/^claim frozen~a\.1: another transaction holds their rows/),
        }),
      ]);
    } finally {
      await trx.rollback();
    }
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { releaseStaleClaims: { claims: locked.length } } });
    await maintainer.stop();
  });

  it('retention pruning skips a row another transaction holds, even one just past the end of its range', async () => {
    // Measured: a plain `DELETE … WHERE finished_at < cutoff ORDER BY finished_at LIMIT n` waits
    // for a locked row just past the cutoff (InnoDB locks it to find the range's end).
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at) VALUES
       (1, 'q', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 3 DAY),
       (2, 'q', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 2 DAY),
       (3, 'q', 'n', '{}', 0, NOW(3), NOW(3))`,
    );
    const holder = db.open({ poolMax: 1 });
    const trx = await holder.knex.transaction();
    try {
      // A frozen worker's exactly-once completion: its fresh history row, uncommitted.
      await trx.raw('UPDATE sluice_job_history SET retry_times = 1 WHERE job_id = 3');
      const maintainer = db.open().maintenance({ jitterMs: 0 });
      expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 2 } } });
      await maintainer.stop();
    } finally {
      await trx.rollback();
    }
    expect(await countRows(db, 'sluice_job_history')).toBe(1);
  });

  it("sluice's own sessions bound a transaction left open and idle (MariaDB idle_transaction_timeout): its locks go, the sweep releases its job", async () => {
    const { flavor } = await db.sluice.serverInfo();
    if (flavor !== 'mariadb') return; // MySQL has no idle-transaction timeout (README: Running on a Galera cluster)
    const [id] = await insertJobs(db, 1, { lockId: 'frozen~c.1', lockedAt: ago(HOUR) });
    // A worker's pool, with a 1 s bound: it deletes its job in a transaction and then goes silent.
    const worker = db.open({ poolMax: 1, idleTransactionTimeoutMs: 1_000 });
    const trx = await worker.knex.transaction();
    await trx.raw('DELETE FROM sluice_jobs WHERE id = ?', [id as number]);
    const clock = fakeClock();
    const maintainer = db.open().maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
    await maintainer.runOnce();
    clock.advance(MINUTE);
    // The server ends the idle transaction (rolls it back, closes its connection): the row is free again.
    await waitFor(
      async () => {
        clock.advance(1);
        return (await maintainer.runOnce()).tasks.releaseStaleClaims?.claims === 1;
      },
      { what: 'the frozen transaction rolled back and its job released', timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(await jobRow(db, id as number)).toMatchObject({ lock_id: '', retry_times: 1 });
    // Whatever the frozen worker does when it wakes up, its DELETE is gone with its transaction.
    await trx.commit().catch(() => undefined);
    expect(await jobRow(db, id as number)).toMatchObject({ lock_id: '', retry_times: 1 });
    await maintainer.stop();
  });
});
