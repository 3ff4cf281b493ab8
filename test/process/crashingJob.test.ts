import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { isClaimOf } from '../helpers/claimKey.ts';
import { deadRow, jobRow, SECOND } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A job whose handling kills its process (test/fixtures/jobs/exitProcess.ts: process.exit(1), as
 * an out-of-memory abort would) cannot fail itself: nothing of its worker is left to write. Each
 * death is found by the maintenance process (here its runOnce, on a clock the test moves) as a dead
 * worker holding the claim, and counted as a failed attempt; after maxRetries + 1 deaths the job is
 * dead, named as such, and kills no further process.
 */
const db = useTestDatabase('process_crashing_job');
const QUEUE = 'crashing';

beforeAll(() => createFixtureTables(db));

/** Spawns a worker, waits until it has claimed and started job `id`, and for its exit. Returns its lock_id. */
async function crashOn(id: number): Promise<string> {
  const worker = spawnWorker(db.url, {
    queues: QUEUE,
    concurrency: 1,
    pollIntervalMs: 100,
    heartbeatIntervalMs: 1_000,
  });
  const exit = await worker.exited;
  expect(exit, worker.describe()).toEqual({ code: 1, signal: null });
  const [started] = await db.query('SELECT pid FROM test_starts WHERE job_id = ? AND pid = ?', [id, worker.pid]);
  expect(started, `job ${id} started in worker ${worker.pid}`).toBeDefined();
  const row = await jobRow<{ lock_id: string }>(db, id, 'lock_id');
  // Nothing of the dead process cleaned up: its claim stays until the maintenance process looks.
  expect(await isClaimOf(db, row?.lock_id, worker.pid)).toBe(true);
  return String(row?.lock_id);
}

describe('a job that kills its process', () => {
  it.each([
    { limit: 'its own maxRetries', maxRetries: 2 as number | undefined },
    { limit: "its definition's maxRetries", maxRetries: undefined },
  ])(
    'ends dead after maxRetries + 1 deaths, each an attempt of code SLUICE_WORKER_DIED ($limit)',
    async ({ maxRetries }) => {
      const { id } = await db.sluice.enqueue({ name: 'exitProcess', queue: QUEUE, maxRetries });
      const clock = fakeClock();
      const maintenance = db.open().maintenance({ jitterMs: 0, clock: clock.now });
      try {
        for (let death = 1; death <= 3; death++) {
          const lockId = await crashOn(id);
          // One pass sees the dead worker's beat; the next, 60 s later on its clock, finds it unchanged.
          await maintenance.runOnce();
          clock.advance(60 * SECOND);
          await maintenance.runOnce();
          if (death < 3 || maxRetries === undefined) {
            expect(await jobRow(db, id, 'lock_id, retry_times, last_error')).toEqual({
              lock_id: '',
              retry_times: death,
              last_error: `worker of claim ${lockId} stopped heartbeating (died or stalled)`,
            });
          }
        }
        if (maxRetries === undefined) {
          // Only a worker knows the definition's limit: the next one to claim it dead-letters it unrun.
          const last = spawnWorker(db.url, { queues: QUEUE, concurrency: 1, pollIntervalMs: 100 });
          await waitFor(async () => (await deadRow(db, id)) !== undefined, { what: `job ${id} dead` });
          expect(last.running).toBe(true);
          expect(await last.stop()).toEqual({ code: 0, signal: null });
        }
        expect(await db.query('SELECT COUNT(*) AS n FROM test_starts WHERE job_id = ?', [id])).toEqual([{ n: 3 }]);
        const dead = await deadRow(db, id);
        expect(dead).toMatchObject({ retry_times: 3, max_retries: 2 });
        // Its dead reason names the deaths: the last release's, or the claim that found its retries spent.
        expect(String(dead?.last_error)).toMatch(
          maxRetries === undefined
            ? /^retries exhausted: 3 failed attempt\(s\) > maxRetries 2 \(its last claim expired: the worker died or stalled\)$/
            : /^worker of claim \S+ stopped heartbeating \(died or stalled\)$/,
        );
        // Every death is an attempt of its own, and the code the dead-job filter reads (the newest) names it.
        const errors = await db.query('SELECT attempt, code FROM sluice_job_errors WHERE job_id = ? ORDER BY attempt', [
          id,
        ]);
        expect(errors).toEqual([1, 2, 3].map((attempt) => ({ attempt, code: 'SLUICE_WORKER_DIED' })));
        expect((await db.sluice.deadJobs.list({ errorCode: 'SLUICE_WORKER_DIED' })).map((j) => j.id)).toEqual([id]);
      } finally {
        await maintenance.stop();
      }
    },
  );
});
