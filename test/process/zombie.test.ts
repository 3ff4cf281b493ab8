import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables, openGate } from '../fixtures/fixtureTables.ts';
import { isClaimOf } from '../helpers/claimKey.ts';
import { jobRow } from '../helpers/factory.ts';
import { claimsReleased } from '../helpers/maintenanceLog.ts';
import { processState } from '../helpers/processState.ts';
import { type LogLine, type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A zombie: a worker process that stalls (SIGSTOP: no heartbeat, no writes) while it runs a job,
 * long enough to be declared dead, then wakes up and finishes the job as if nothing happened. By then the
 * sweeper has released its claim and a second worker holds the job. Every write the zombie makes
 * to the job is fenced by its own claim token, so its finish must match nothing, change nothing
 * of the second worker's claim, and be reported as claim:lost.
 */
const db = useTestDatabase('process_zombie');
const LOCK_TIMEOUT_MS = 3_000;
const QUEUE = 'zombie';

interface JobState {
  lock_id: string;
  retry_times: number;
  run_at: Date;
  last_error: string | null;
}

beforeAll(() => createFixtureTables(db));

/** The columns a claim changes, without locked_at (the second worker's heartbeats move it). */
const CLAIM_COLUMNS = 'lock_id, retry_times, run_at, last_error';

/**
 * Workers heartbeat every second: their claims stay well inside the 3 s lock timeout and their
 * registry rows inside 2.5 missed beats while they run, and both run out soon once one stops.
 */
function worker(): SluiceProcess {
  return spawnWorker(db.url, {
    queues: QUEUE,
    concurrency: 1,
    lockTimeoutMs: LOCK_TIMEOUT_MS,
    heartbeatIntervalMs: 1_000,
    pollIntervalMs: 200,
  });
}

/** Waits until worker `w` holds job `id` and its handler has started; returns the job's row. */
async function runningOn(w: SluiceProcess, id: number): Promise<JobState> {
  return waitFor(
    async () => {
      const row = await jobRow<JobState>(db, id, CLAIM_COLUMNS);
      if (!(await isClaimOf(db, row?.lock_id, w.pid))) return undefined;
      const started = await db.query('SELECT id FROM test_starts WHERE job_id = ? AND pid = ?', [id, w.pid]);
      return started.length > 0 ? row : undefined;
    },
    { what: `job ${id} running on worker ${w.pid}` },
  );
}

const finishOf = (id: number) => (l: LogLine) =>
  l.event === 'claim:lost' &&
  (l.operation === 'complete' || l.operation === 'retry') &&
  (l.jobIds as number[]).includes(id);

describe('a zombie worker (real processes, SIGSTOP/SIGCONT)', () => {
  it('cannot finish a job it lost while stopped: the re-claim stands, the second worker completes it once, the zombie logs claim:lost', async () => {
    const { id } = await db.sluice.enqueue({ name: 'gated', queue: QUEUE, payload: { n: 7 } });
    const zombie = worker();
    await zombie.ready;
    const zombieClaim = await runningOn(zombie, id);

    zombie.kill('SIGSTOP');
    await waitFor(() => processState(zombie.pid) === 'T', { what: `worker ${zombie.pid} stopped` });

    // The stopped worker cannot heartbeat: it misses its registry beats and its claim ages past
    // the lock timeout; the sweeper takes the claim back by whichever it sees first.
    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: LOCK_TIMEOUT_MS, jitterMs: 100 });
    const second = worker();
    await Promise.all([sweeper.ready, second.ready]);
    const secondClaim = await runningOn(second, id);
    expect(secondClaim.retry_times).toBe(1);
    expect(secondClaim.last_error).toContain(`claim ${zombieClaim.lock_id} `);
    await sweeper.waitForLine(
      (l) => l.event === 'maintenance:completed' && claimsReleased(l) === 1,
      10_000,
      'the sweep that released the zombie',
    );

    // Wake the zombie with its job free to finish: it completes its handler (or, if its first
    // heartbeat comes first, has it aborted) and tries to write the outcome under its old claim.
    await openGate(db, zombie.pid);
    zombie.kill('SIGCONT');
    const lost = await zombie.waitForLine(finishOf(id), 15_000, `claim:lost for job ${id} when finishing it`);
    expect(lost).toMatchObject({ pid: zombie.pid, lockId: zombieClaim.lock_id, lost: 1 });

    // Nothing the zombie wrote matched: the second worker's claim is exactly as it was.
    expect(await jobRow<JobState>(db, id, CLAIM_COLUMNS)).toEqual(secondClaim);
    expect(zombie.events('job:completed')).toEqual([]);
    expect(zombie.events('job:retried')).toEqual([]);
    expect(await db.query('SELECT id FROM sluice_dead_jobs')).toEqual([]);

    // The second worker finishes the job: the one completion it has.
    await openGate(db, second.pid);
    await waitFor(async () => (await jobRow<JobState>(db, id, CLAIM_COLUMNS)) === undefined, {
      what: `job ${id} completed`,
    });
    await second.waitForLine(
      (l) => l.event === 'job:completed' && l.jobId === id,
      10_000,
      `job:completed for job ${id}`,
    );
    const effects = await db.query<{ pid: number }>('SELECT pid FROM test_effects WHERE job_id = ?', [id]);
    expect(effects.filter((e) => e.pid === second.pid)).toHaveLength(1);
    // The zombie's handler may have run to its end (at-least-once), but no other process ran it.
    expect(effects.every((e) => e.pid === second.pid || e.pid === zombie.pid)).toBe(true);

    const exits = await Promise.all([zombie.stop(), second.stop(), sweeper.stop()]);
    expect(exits[0], zombie.describe()).toEqual({ code: 0, signal: null });
    expect(exits[1], second.describe()).toEqual({ code: 0, signal: null });
    expect(exits[2], sweeper.describe()).toEqual({ code: 0, signal: null });
  });
});
