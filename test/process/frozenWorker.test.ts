import { beforeAll, describe, expect, it } from 'vitest';
import { workerKeyOf } from '../../src/model/claimKey.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { jobRow } from '../helpers/factory.ts';
import { processState } from '../helpers/processState.ts';
import { spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Issue 15, finding 14, with real processes: a worker SIGSTOPped after its exactly-once DELETE and
 * before its COMMIT holds its job's row lock for as long as it stays frozen. The maintenance
 * process must not wait on it: another worker SIGKILLed meanwhile gets its claims recovered as
 * usual, and the maintenance log says what it could not release and why. (Before: the release
 * UPDATE waited innodb_lock_wait_timeout, 50 s, and was re-run; no pass completed, nothing was
 * recovered, nothing was logged.)
 */
const db = useTestDatabase('process_frozen');

beforeAll(() => createFixtureTables(db));

describe('a worker frozen mid-commit', () => {
  it('does not stop the recovery of another worker’s claims after a SIGKILL, and the maintenance log names what it skipped', async () => {
    const sweeper = spawnMaintenance(db.url, { schedule: '* * * * * *', jitterMs: 100, missedHeartbeats: 2 });
    const beats = { heartbeatIntervalMs: 1_000, lockTimeoutMs: 60_000, pollIntervalMs: 100 };
    const frozen = spawnWorker(db.url, { queues: 'frozen', concurrency: 1, ...beats });
    const doomed = spawnWorker(db.url, { queues: 'victims', concurrency: 5, ...beats });
    await Promise.all([sweeper.ready, frozen.ready, doomed.ready]);
    // Read while the worker runs: its line may still be on its way after `ready`, and once the
    // worker is stopped nothing more of its output arrives.
    const started = await frozen.waitForLine((l) => l.event === 'worker:started', 10_000, 'worker:started');

    const { id: frozenJob } = await db.sluice.enqueue({ name: 'freeze', queue: 'frozen' });
    const { batchId } = await db.sluice.enqueueBatch(
      Array.from({ length: 5 }, () => ({ name: 'gated', queue: 'victims' })),
    );
    // The frozen worker stopped itself right after its fenced DELETE; its transaction is open.
    await waitFor(() => frozen.running && processState(frozen.pid) === 'T', { what: 'the worker frozen mid-commit' });
    await waitFor(
      async () =>
        (await db.query('SELECT id FROM test_starts WHERE pid = ?', [doomed.pid])).length === 5 ? true : undefined,
      { what: 'the other worker running its 5 jobs' },
    );

    doomed.kill('SIGKILL');
    expect(await doomed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const victims = await waitFor(
      async () => {
        const rows = await db.query<{ lock_id: string; retry_times: number }>(
          'SELECT lock_id, retry_times FROM sluice_jobs WHERE batch_id = ?',
          [batchId],
        );
        return rows.length === 5 && rows.every((r) => r.lock_id === '' && r.retry_times === 1) ? rows : undefined;
      },
      { what: 'the SIGKILLed worker’s 5 jobs recovered while the other worker stays frozen', timeoutMs: 20_000 },
    );
    expect(victims).toHaveLength(5);
    expect(processState(frozen.pid)).toBe('T');

    // The frozen worker is dead to the sweeper too, but its job's row is held: skipped, and said so.
    const skipped = await sweeper.waitForLine(
      (l) => l.event === 'maintenance:skipped' && (l.jobIds as number[]).includes(frozenJob),
      20_000,
      'maintenance:skipped naming the frozen job',
    );
    expect(skipped).toMatchObject({ task: 'releaseDeadWorkers', queue: 'frozen', level: 40 });
    expect(String(skipped.msg)).toMatch(/could not release 1 job\(s\) in queue frozen .*another transaction holds/);
    // Its DELETE is not committed: the job is still there, still claimed by the frozen worker.
    expect((await jobRow<{ lock_id: string }>(db, frozenJob, 'lock_id'))?.lock_id).toMatch(
      new RegExp(`^${workerKeyOf(started.workerId as string)}\\.`),
    );

    frozen.kill('SIGKILL'); // ends a stopped process too; its transaction rolls back
    await frozen.exited;
    await waitFor(async () => (await jobRow<{ lock_id: string }>(db, frozenJob, 'lock_id'))?.lock_id === '', {
      what: 'the frozen worker’s job released once its transaction is gone',
      timeoutMs: 20_000,
    });
    expect(await db.query('SELECT job_id FROM test_effects')).toEqual([]);
    expect(await sweeper.stop()).toEqual({ code: 0, signal: null });
  });
});
