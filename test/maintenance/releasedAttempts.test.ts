import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { releaseDeadWorkers } from '../../src/maintenance/releaseDeadWorkers.ts';
import { releaseStaleClaims } from '../../src/maintenance/releaseStaleClaims.ts';
import { countRows, dbNow, insertJob, insertJobs, MINUTE, SECOND } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A claim the maintenance process takes back ends its attempt as failed (retry_times + 1): the
 * release records that attempt's error — code SLUICE_WORKER_DIED or SLUICE_CLAIM_EXPIRED, the
 * message it wrote into last_error, the worker — in its own transaction, and trims the job's
 * errors and log lines to the latest keptAttempts. A release that changes nothing records nothing.
 */
const db = useTestDatabase('released_attempts');
const taskDb = () => ({ db: fromKnex(db.sluice.knex), tables: db.sluice.tables });

async function registerWorker(id: string): Promise<void> {
  await db.query(
    `INSERT INTO sluice_workers (id, host, pid, queues, started_at, heartbeat_at, heartbeat_interval_ms, concurrency, concurrency_limit) VALUES (?, 'h', 1, 'mail', NOW(3), NOW(3), 1000, 10, 10)`,
    [id],
  );
}

async function errorsOf(id: number) {
  return db.query<{ attempt: number; worker_id: string | null; code: string; message: string; stack: null }>(
    'SELECT attempt, worker_id, code, message, stack FROM sluice_job_errors WHERE job_id = ? ORDER BY attempt',
    [id],
  );
}

describe('attempts ended by the maintenance process', () => {
  it('a dead worker’s released claims each record "the worker stopped heartbeating", trimmed to keptAttempts', async () => {
    await registerWorker('host-7~k7');
    const [fresh, old] = [
      await insertJob(db, { queue: 'mail', lockId: 'k7.1', lockedAt: dbNow }),
      await insertJob(db, { queue: 'mail', lockId: 'k7.1', lockedAt: dbNow, retryTimes: 3 }),
    ] as [number, number];
    // The old job already kept the errors (and lines) of attempts 1–3.
    for (const attempt of [1, 2, 3]) {
      await db.query(
        `INSERT INTO sluice_job_errors (job_id, attempt, failed_at, message) VALUES (?, ?, NOW(3), 'earlier')`,
        [old, attempt],
      );
      await db.query(
        `INSERT INTO sluice_job_logs (job_id, attempt, line, logged_at, message) VALUES (?, ?, 1, NOW(3), 'line')`,
        [old, attempt],
      );
    }
    const clock = fakeClock();
    const sweep = releaseDeadWorkers(taskDb(), {
      missedHeartbeats: 2.5,
      batchSize: 100,
      clock: clock.now,
      keptAttempts: 2,
    });
    expect(await sweep.runOnce()).toMatchObject({ claims: 0 });
    expect(await countRows(db, 'sluice_job_errors')).toBe(3);
    clock.advance(2_500);
    expect(await sweep.runOnce()).toMatchObject({ workers: 1, claims: 2 });

    const died = {
      worker_id: 'host-7~k7',
      code: 'SLUICE_WORKER_DIED',
      message: 'worker of claim k7.1 stopped heartbeating (died or stalled)',
      stack: null,
    };
    expect(await errorsOf(fresh)).toEqual([{ attempt: 1, ...died }]);
    expect(await errorsOf(old)).toEqual([
      expect.objectContaining({ attempt: 3, message: 'earlier' }),
      { attempt: 4, ...died },
    ]);
    const lines = await db.query<{ attempt: number }>('SELECT attempt FROM sluice_job_logs WHERE job_id = ?', [old]);
    expect(lines.map((l) => l.attempt)).toEqual([3]);
  });

  it('an expired claim records "the claim expired", naming its worker when the registry still knows it', async () => {
    await registerWorker('host-8~k8');
    const known = await insertJob(db, { queue: 'mail', lockId: 'k8.3', lockedAt: dbNow });
    const unknown = await insertJob(db, { queue: 'mail', lockId: 'gone.1', lockedAt: dbNow });
    const clock = fakeClock();
    const sweep = releaseStaleClaims(taskDb(), {
      lockTimeoutMs: MINUTE,
      batchSize: 100,
      jitterMs: 0,
      clock: clock.now,
      keptAttempts: 10,
    });
    expect(await sweep.runOnce()).toMatchObject({ claims: 0 });
    clock.advance(MINUTE);
    expect(await sweep.runOnce()).toMatchObject({ claims: 2 });
    const expired = (lockId: string) => ({
      attempt: 1,
      code: 'SLUICE_CLAIM_EXPIRED',
      message: `claim ${lockId} expired after ${MINUTE} ms without a heartbeat (worker died or stalled)`,
      stack: null,
    });
    expect(await errorsOf(known)).toEqual([{ ...expired('k8.3'), worker_id: 'host-8~k8' }]);
    expect(await errorsOf(unknown)).toEqual([{ ...expired('gone.1'), worker_id: null }]);
  });

  it('records nothing for claims it did not release, nor with keptAttempts 0', async () => {
    await registerWorker('host-9~k9');
    await insertJobs(db, 2, { queue: 'mail', lockId: 'k9.1', lockedAt: dbNow });
    const clock = fakeClock();
    const sweep = releaseDeadWorkers(taskDb(), {
      missedHeartbeats: 2.5,
      batchSize: 100,
      clock: clock.now,
      keptAttempts: 10,
    });
    await sweep.runOnce();
    clock.advance(2_500);
    // The worker beats once more after it was judged: its claims stay, and nothing is recorded.
    await db.query('UPDATE sluice_workers SET beats = beats + 1 WHERE id = ?', ['host-9~k9']);
    await sweep.runOnce();
    expect(await countRows(db, 'sluice_job_errors')).toBe(0);

    const off = releaseDeadWorkers(taskDb(), {
      missedHeartbeats: 2.5,
      batchSize: 100,
      clock: clock.now,
      keptAttempts: 0,
    });
    await off.runOnce();
    clock.advance(10 * SECOND);
    expect(await off.runOnce()).toMatchObject({ claims: 2 });
    expect(await countRows(db, 'sluice_job_errors')).toBe(0);
  });
});
