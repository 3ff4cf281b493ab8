import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables, openGate } from '../fixtures/fixtureTables.ts';
import { isClaimOf } from '../helpers/claimKey.ts';
import { jobRow } from '../helpers/factory.ts';
import { claimsReleased } from '../helpers/maintenanceLog.ts';
import {
  type LogLine,
  type SluiceProcess,
  spawnMaintenance,
  spawnWorker,
  type WorkerFlags,
} from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A worker process dies with SIGKILL in the middle of a job. Nothing in that process can clean
 * up: its claim stays in the table until the maintenance process (a real `sluice sweep`) takes it
 * back, with retry_times + 1, and another worker process runs the job. The sweeper has two ways
 * to notice: the claim is older than the lock timeout, or the worker's registry row missed its
 * heartbeats. Each test leaves exactly one of them able to fire, so each path is proven alone.
 */
const db = useTestDatabase('process_crash');
const QUEUE = 'crash';

interface JobState {
  lock_id: string;
  retry_times: number;
  last_error: string | null;
}

beforeAll(() => createFixtureTables(db));

function worker(flags: Omit<WorkerFlags, 'queues'>): SluiceProcess {
  return spawnWorker(db.url, { queues: QUEUE, concurrency: 2, pollIntervalMs: 200, ...flags });
}

/** Starts a worker, waits until it is running job `id` (claimed and started), and SIGKILLs it. Returns its claim. */
async function killMidJob(
  id: number,
  flags: Omit<WorkerFlags, 'queues'>,
): Promise<{ doomed: SluiceProcess; lockId: string; workerId: string }> {
  const doomed = worker(flags);
  await doomed.ready;
  const claimed = await waitFor(
    async () => {
      const [row] = await db.query<{ lock_id: string }>(
        `SELECT j.lock_id FROM sluice_jobs j JOIN test_starts s ON s.job_id = j.id AND s.pid = ?
         WHERE j.id = ?`,
        [doomed.pid, id],
      );
      return (await isClaimOf(db, row?.lock_id, doomed.pid)) ? row : undefined;
    },
    { what: `job ${id} claimed and started by worker ${doomed.pid}` },
  );
  doomed.kill('SIGKILL');
  expect(await doomed.exited, doomed.describe()).toEqual({ code: null, signal: 'SIGKILL' });
  // Dead processes do not clean up: the claim is still there, untouched.
  expect(await jobRow<JobState>(db, id, 'lock_id, retry_times, last_error')).toMatchObject({
    lock_id: claimed.lock_id,
    retry_times: 0,
  });
  const started = await doomed.waitForLine((l) => l.event === 'worker:started', 0, 'worker:started');
  return { doomed, lockId: claimed.lock_id, workerId: started.workerId as string };
}

/** Waits until `rescuer` holds job `id`; then lets it finish, and checks it ran there once. */
async function rescue(id: number, doomed: SluiceProcess, rescuer: SluiceProcess): Promise<JobState> {
  const reclaimed = await waitFor(
    async () => {
      const row = await jobRow<JobState>(db, id, 'lock_id, retry_times, last_error');
      return (await isClaimOf(db, row?.lock_id, rescuer.pid)) ? row : undefined;
    },
    { what: `job ${id} re-claimed by worker ${rescuer.pid}` },
  );
  await openGate(db, rescuer.pid);
  await waitFor(async () => (await jobRow<JobState>(db, id, 'lock_id, retry_times, last_error')) === undefined, {
    what: `job ${id} completed`,
  });
  await rescuer.waitForLine(
    (l) => l.event === 'job:completed' && l.jobId === id,
    10_000,
    `job:completed for job ${id}`,
  );
  // Started twice (once per process), run to its end once, by the rescuer.
  expect(await db.query('SELECT pid FROM test_starts WHERE job_id = ? ORDER BY id', [id])).toEqual([
    { pid: doomed.pid },
    { pid: rescuer.pid },
  ]);
  expect(await db.query('SELECT job_id, pid FROM test_effects')).toEqual([{ job_id: id, pid: rescuer.pid }]);
  expect(await db.query('SELECT id FROM sluice_dead_jobs')).toEqual([]);
  return reclaimed;
}

async function stopAll(...processes: SluiceProcess[]): Promise<void> {
  const exits = await Promise.all(processes.map((p) => p.stop()));
  for (const [i, exit] of exits.entries()) expect(exit, processes[i]?.describe()).toEqual({ code: 0, signal: null });
}

const releasedOne = (l: LogLine) => l.event === 'maintenance:completed' && claimsReleased(l) === 1;

describe('crash recovery (real processes)', () => {
  it('lock timeout: the sweeper releases the claim of a SIGKILLed worker with retry_times + 1; another worker completes the job', async () => {
    const LOCK_TIMEOUT_MS = 3_000;
    const { id } = await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 1 } });
    // The worker registered a 3 s lock timeout; the maintenance process only declares workers dead
    // after 30 missed beats (30 s), so only the claim's age can tell — judged by the lock timeout
    // the worker registered, although the maintenance process's own is a minute.
    const { doomed, lockId } = await killMidJob(id, { lockTimeoutMs: LOCK_TIMEOUT_MS, heartbeatIntervalMs: 1_000 });

    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: 60_000, jitterMs: 100, missedHeartbeats: 30 });
    const rescuer = worker({ lockTimeoutMs: LOCK_TIMEOUT_MS, heartbeatIntervalMs: 1_000 });
    await Promise.all([sweeper.ready, rescuer.ready]);

    const reclaimed = await rescue(id, doomed, rescuer);
    // The rescuer ran the job's second attempt: the expired claim counted as a failed one.
    expect(reclaimed.retry_times).toBe(1);
    expect(reclaimed.last_error).toBe(
      `claim ${lockId} expired after ${LOCK_TIMEOUT_MS} ms without a heartbeat (worker died or stalled)`,
    );
    const sweep = await sweeper.waitForLine(releasedOne, 10_000, 'the sweep that released the claim');
    expect(sweep).toMatchObject({
      leader: true,
      tasks: { releaseStaleClaims: { claims: 1, deadLettered: 0 }, releaseDeadWorkers: { claims: 0 } },
    });

    await stopAll(sweeper, rescuer);
  });

  it('missed heartbeats: the sweeper declares a SIGKILLed worker dead and releases its claim long before the lock timeout', async () => {
    const { id } = await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 2 } });
    // Claims live for a minute, but this worker heartbeats every 400 ms: dead after 2.5 missed beats.
    const { doomed, lockId, workerId } = await killMidJob(id, { lockTimeoutMs: 60_000, heartbeatIntervalMs: 400 });

    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: 60_000, jitterMs: 100 });
    const rescuer = worker({ lockTimeoutMs: 60_000, heartbeatIntervalMs: 1_000 });
    await Promise.all([sweeper.ready, rescuer.ready]);

    const reclaimed = await rescue(id, doomed, rescuer);
    expect(reclaimed.retry_times).toBe(1);
    expect(reclaimed.last_error).toBe(`worker of claim ${lockId} stopped heartbeating (died or stalled)`);
    const sweep = await sweeper.waitForLine(releasedOne, 10_000, 'the sweep that released the claim');
    expect(sweep).toMatchObject({
      leader: true,
      tasks: { releaseStaleClaims: { claims: 0 }, releaseDeadWorkers: { claims: 1, workers: 1 } },
    });
    // The dead worker is gone from the registry; the live one is still there.
    const registered = (await db.query<{ id: string }>('SELECT id FROM sluice_workers')).map((r) => r.id);
    expect(registered).not.toContain(workerId);
    expect(registered.some((w) => w.includes(`-${rescuer.pid}~`))).toBe(true);

    await stopAll(sweeper, rescuer);
  });

  it('a job killed on its last allowed attempt is dead-lettered, never run again', async () => {
    const { id } = await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 3 }, maxRetries: 0 });
    const { doomed, lockId } = await killMidJob(id, { lockTimeoutMs: 2_000, heartbeatIntervalMs: 400 });

    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: 2_000, jitterMs: 100 });
    const rescuer = worker({ lockTimeoutMs: 3_000, heartbeatIntervalMs: 1_000 });
    await Promise.all([sweeper.ready, rescuer.ready]);
    await openGate(db, rescuer.pid); // it would finish the job at once, were it allowed to run it

    const dead = await waitFor(
      async () =>
        (
          await db.query<Omit<JobState, 'lock_id'>>(
            'SELECT retry_times, last_error FROM sluice_dead_jobs WHERE id = ?',
            [id],
          )
        )[0],
      { what: `job ${id} dead-lettered` },
    );
    expect(dead.retry_times).toBe(1);
    expect(dead.last_error).toContain(`claim ${lockId} `); // whichever way the sweeper noticed
    expect(await jobRow<JobState>(db, id, 'lock_id, retry_times, last_error')).toBeUndefined();
    // Whichever moved it (the sweeper in its pass, or the rescuer if it claimed the job between
    // the sweeper's release and its dead-letter step), the job never ran a second time.
    expect(await db.query('SELECT pid FROM test_starts WHERE job_id = ?', [id])).toEqual([{ pid: doomed.pid }]);
    expect(await db.query('SELECT job_id FROM test_effects')).toEqual([]);

    await stopAll(sweeper, rescuer);
  });
});
