import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { jobRow } from '../helpers/factory.ts';
import { type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A job's attempt history (its attempt errors and its ctx.log lines) lives in the database, not in
 * any worker: it survives the SIGKILL of the worker that wrote part of it, and the next worker
 * adds to it. Real `sluice work` / `sluice maintenance` processes, the `flaky` fixture job.
 */
const db = useTestDatabase('process_attempts');
const QUEUE = 'attempts';
/** Long enough that a worker never retries on its own: the test makes the job due when it wants. */
const NEVER = { type: 'fixed', delayMs: 3_600_000 } as const;

beforeAll(() => createFixtureTables(db));

function worker(flags: { heartbeatIntervalMs?: number } = {}): SluiceProcess {
  return spawnWorker(db.url, { queues: QUEUE, pollIntervalMs: 100, lockTimeoutMs: 60_000, ...flags });
}

/** Its worker:started line may arrive after its `ready` (the log is written asynchronously): waited for. */
async function workerIdOf(p: SluiceProcess): Promise<string> {
  return (await p.waitForLine((l) => l.event === 'worker:started', 10_000, 'worker:started')).workerId as string;
}

/** Waits until job `id` is free again with `retryTimes` failed attempts. */
async function released(id: number, retryTimes: number): Promise<void> {
  await waitFor(
    async () => {
      const row = await jobRow<{ lock_id: string; retry_times: number }>(db, id, 'lock_id, retry_times');
      return row?.lock_id === '' && row.retry_times === retryTimes;
    },
    { what: `job ${id} released after attempt ${retryTimes}` },
  );
}

/** Makes job `id` due now (its retry was scheduled an hour away). */
async function dueNow(id: number): Promise<void> {
  await db.query('UPDATE sluice_jobs SET run_at = NOW(3) WHERE id = ?', [id]);
}

async function completed(id: number): Promise<void> {
  await waitFor(async () => (await db.sluice.jobs.get(id))?.state === 'completed', { what: `job ${id} completed` });
}

describe('attempt history across worker processes', () => {
  it('survives a SIGKILL of the worker between attempts: both attempts’ errors and every line are there', async () => {
    const { id } = await db.sluice.enqueue({ name: 'flaky', queue: QUEUE, payload: { succeedOn: 3 }, backoff: NEVER });

    const a = worker();
    await a.ready;
    const aId = await workerIdOf(a);
    await released(id, 1); // attempt 1 failed in A (its error and line written with the retry) …
    a.kill('SIGKILL'); // … and A dies before the next one
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Due only now: made due while A lived, A could claim attempt 2 and die holding it.
    await dueNow(id);

    const b = worker();
    await b.ready;
    const bId = await workerIdOf(b);
    await released(id, 2); // attempt 2 fails in B
    await dueNow(id);
    await completed(id); // attempt 3 succeeds in B
    await b.stop();

    const job = await db.sluice.jobs.get(id);
    expect(job?.errors.map((e) => [e.attempt, e.workerId, e.code, e.message])).toEqual([
      [2, bId, 'FLAKY_2', `attempt 2 failed in ${b.pid}`],
      [1, aId, 'FLAKY_1', `attempt 1 failed in ${a.pid}`],
    ]);
    expect(job?.logs.map((l) => [l.attempt, l.message, l.fields])).toEqual([
      [1, 'attempt 1', { pid: a.pid }],
      [2, 'attempt 2', { pid: b.pid }],
      [3, 'attempt 3', { pid: b.pid }],
    ]);
  });

  it('an attempt cut short by a SIGKILL keeps the lines its heartbeat wrote and is recorded as the worker’s death', async () => {
    const { id } = await db.sluice.enqueue({
      name: 'flaky',
      queue: QUEUE,
      payload: { hangOn: 1, succeedOn: 1 },
      backoff: NEVER,
    });
    const a = worker({ heartbeatIntervalMs: 400 });
    await a.ready;
    const aId = await workerIdOf(a);
    // Attempt 1 hangs in A; its line reaches the table with A's heartbeat, not at the attempt's end.
    await waitFor(async () => ((await db.sluice.jobs.get(id))?.logs.length ?? 0) === 1, {
      what: 'the running attempt’s line written by the heartbeat',
    });
    a.kill('SIGKILL');
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const sweeper = spawnMaintenance(db.url, { lockTimeoutMs: 60_000, jitterMs: 100 });
    const b = worker();
    await Promise.all([sweeper.ready, b.ready]);
    await completed(id); // the sweeper gives the claim back; attempt 2 succeeds in B
    await Promise.all([sweeper.stop(), b.stop()]);

    const job = await db.sluice.jobs.get(id);
    expect(job?.errors).toEqual([
      expect.objectContaining({
        attempt: 1,
        workerId: aId,
        code: 'SLUICE_WORKER_DIED',
        message: expect.stringContaining('stopped heartbeating'),
      }),
    ]);
    expect(job?.logs.map((l) => [l.attempt, l.fields])).toEqual([
      [1, { pid: a.pid }],
      [2, { pid: b.pid }],
    ]);
  });
});
