import { describe, expect, it } from 'vitest';
import { defineJob, HandlerTimeoutError, PermanentJobError, RetriesExhaustedError } from '../../src/index.ts';
import { countRows, deadRow, insertJob, jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, openRecorded, withWorker } from '../helpers/workerHarness.ts';

/**
 * A worker runs jobs, retries failures with their backoff and dead-letters what cannot succeed.
 * stop(): WorkerShutdown.test.ts; heartbeats and lost claims: WorkerClaims.test.ts.
 */
const db = useTestDatabase('worker');

describe('Worker', () => {
  it('runs jobs and deletes them, emitting job:completed for each', async () => {
    const { sluice, events } = openRecorded(db);
    const seen: number[] = [];
    const ok = defineJob<{ n: number }>({ name: 'ok', handle: (payload) => void seen.push(payload.n) });
    await sluice.enqueueBatch(Array.from({ length: 200 }, (_, n) => ({ name: 'ok', payload: { n }, queue: 'work' })));
    await withWorker(sluice, [ok], { queues: ['work'], concurrency: 10 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue to drain' });
      await waitFor(() => events['job:completed'].length === 200, { what: '200 job:completed events' });
    });
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, n) => n));
    expect(events['job:completed'][0]).toMatchObject({ name: 'ok', queue: 'work', jobId: expect.any(Number) });
    expect(new Set(events['job:completed'].map((e) => e.jobId)).size).toBe(200);
    expect(events['job:failed']).toEqual([]);
    expect(events['worker:error']).toEqual([]);
  });

  it('retries a failing job with its backoff, then moves it to dead_jobs with the last error', async () => {
    const { sluice, events } = openRecorded(db);
    const attempts: number[] = [];
    const flaky = defineJob({
      name: 'flaky',
      maxRetries: 2,
      backoff: { type: 'fixed', delayMs: 1 },
      handle: (_payload, ctx) => {
        attempts.push(ctx.job.retryTimes);
        throw new Error(`kaboom #${attempts.length}`);
      },
    });
    const { id } = await sluice.enqueue({ name: 'flaky', payload: { keep: 'me' } });
    await withWorker(sluice, [flaky], {}, async () => {
      await waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' });
      await waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' });
    });

    expect(attempts).toEqual([0, 1, 2]);
    const dead = await deadRow(db, id);
    expect(dead).toMatchObject({ id, name: 'flaky', queue: 'default', retry_times: 3, max_retries: 2 });
    expect(JSON.parse(dead?.payload as string)).toEqual({ keep: 'me' });
    expect(dead?.last_error).toContain('Error: kaboom #3');
    expect(await countRows(db, 'sluice_jobs')).toBe(0);

    expect(events['job:failed'].map((e) => [e.jobId, e.attempt, e.error.message])).toEqual([
      [id, 1, 'kaboom #1'],
      [id, 2, 'kaboom #2'],
      [id, 3, 'kaboom #3'],
    ]);
    expect(events['job:retried'].map((e) => [e.jobId, e.retryTimes, e.delayMs])).toEqual([
      [id, 1, 1],
      [id, 2, 1],
    ]);
    expect(events['job:dead']).toEqual([
      expect.objectContaining({
        jobId: id,
        name: 'flaky',
        queue: 'default',
        error: expect.objectContaining({ message: 'kaboom #3' }),
      }),
    ]);
    expect(events['job:completed']).toEqual([]);
    expect(events['worker:error']).toEqual([]);
  });

  it('lets a job’s own maxRetries override its definition’s', async () => {
    const { sluice } = openRecorded(db);
    let calls = 0;
    const fails = defineJob({
      name: 'fails',
      maxRetries: 5,
      backoff: { type: 'fixed', delayMs: 1 },
      handle: () => {
        calls++;
        throw new Error('no');
      },
    });
    const { id } = await sluice.enqueue({ name: 'fails', maxRetries: 0 });
    await withWorker(sluice, [fails], {}, () => waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' }));
    expect(calls).toBe(1);
    expect(await deadRow(db, id)).toMatchObject({ retry_times: 1, max_retries: 0 });
  });

  it('uses a job’s own backoff over its definition’s', async () => {
    const { sluice, events } = openRecorded(db);
    const fails = defineJob({
      name: 'fails',
      maxRetries: 5,
      backoff: { type: 'fixed', delayMs: 1 },
      handle: () => {
        throw new Error('no');
      },
    });
    const { id } = await sluice.enqueue({ name: 'fails', backoff: { type: 'fixed', delayMs: 3_600_000 } });
    await withWorker(sluice, [fails], {}, () =>
      waitFor(() => events['job:retried'].length === 1, { what: 'the first retry' }),
    );
    expect(events['job:retried']).toEqual([expect.objectContaining({ jobId: id, retryTimes: 1, delayMs: 3_600_000 })]);
    const [{ ahead }] = (await db.query<{ ahead: number }>(
      'SELECT TIMESTAMPDIFF(MINUTE, NOW(3), run_at) AS ahead FROM sluice_jobs WHERE id = ?',
      [id],
    )) as [{ ahead: number }];
    expect(Number(ahead)).toBeGreaterThan(50);
  });

  it('dead-letters at once when the handler throws PermanentJobError', async () => {
    const { sluice, events } = openRecorded(db);
    let calls = 0;
    const strict = defineJob({
      name: 'strict',
      maxRetries: 5,
      handle: () => {
        calls++;
        throw new PermanentJobError('payload can never be valid');
      },
    });
    const { id } = await sluice.enqueue({ name: 'strict' });
    await withWorker(sluice, [strict], {}, () => waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' }));
    expect(calls).toBe(1);
    const dead = await deadRow(db, id);
    expect(dead).toMatchObject({ retry_times: 1, max_retries: 5 });
    expect(dead?.last_error).toContain('PermanentJobError: payload can never be valid');
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(events['job:retried']).toEqual([]);
    expect(events['job:failed'].map((e) => e.error)).toEqual([expect.any(PermanentJobError)]);
  });

  it('gives a job with no handler back at once, no attempt spent, and says which worker could not run it', async () => {
    const { sluice, events } = openRecorded(db);
    const known = defineJob({ name: 'known', handle: () => undefined });
    const { id } = await sluice.enqueue({ name: 'ghost', maxRetries: 3 });
    const options = { maxPollIntervalMs: 60_000, heartbeatIntervalMs: 100 };
    await withWorker(sluice, [known], options, async () => {
      await waitFor(() => events['job:unknown'].length > 0, { what: 'the job given back' });
      await waitFor(async () => (await sluice.workers.unknownJobs()).length > 0, { what: 'the heartbeat carrying it' });
      expect(await sluice.workers.unknownJobs()).toEqual([
        { name: 'ghost', queues: ['default'], workers: 1, givenBack: 1 },
      ]);
      const [worker] = await sluice.workers.list();
      expect(worker).toMatchObject({
        jobNames: ['known'],
        unknownJobs: [{ name: 'ghost', queue: 'default', givenBack: 1 }],
      });
    });
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 0, last_error: null });
    // Due again after about maxPollIntervalMs (±25 %): the worker does not claim it again at once.
    const [{ ahead }] = (await db.query<{ ahead: number }>(
      'SELECT TIMESTAMPDIFF(SECOND, NOW(3), run_at) AS ahead FROM sluice_jobs WHERE id = ?',
      [id],
    )) as [{ ahead: number }];
    expect(Number(ahead)).toBeGreaterThan(30);
    expect(events['job:unknown']).toEqual([
      expect.objectContaining({ queue: 'default', names: ['ghost'], jobIds: [id], firstSeen: true }),
    ]);
    expect(events['job:failed']).toEqual([]);
    expect(events['job:retried']).toEqual([]);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    // Stopped, it no longer counts: no live worker reports the name.
    expect(await sluice.workers.unknownJobs()).toEqual([]);
  });

  it('aborts ctx.signal when timeoutMs passes and counts the attempt as failed, even if the handler then returns', async () => {
    const { sluice, events } = openRecorded(db);
    let signal: AbortSignal | undefined;
    const slow = defineJob({
      name: 'slow',
      timeoutMs: 50,
      maxRetries: 0,
      handle: async (_payload, ctx) => {
        signal = ctx.signal;
        await aborted(ctx.signal);
        return 'finished anyway';
      },
    });
    const { id } = await sluice.enqueue({ name: 'slow' });
    await withWorker(sluice, [slow], {}, () => waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' }));
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(HandlerTimeoutError);
    const dead = await deadRow(db, id);
    expect(dead?.last_error).toContain('HandlerTimeoutError: handler "slow" did not finish within 50 ms');
    expect(events['job:failed']).toEqual([
      expect.objectContaining({ jobId: id, error: expect.objectContaining({ code: 'SLUICE_HANDLER_TIMEOUT' }) }),
    ]);
    expect(events['job:completed']).toEqual([]);
  });

  it('dead-letters without running a job whose expired claims already used up its retries', async () => {
    const { sluice, events } = openRecorded(db);
    let calls = 0;
    const work = defineJob({ name: 'work', handle: () => void calls++ });
    const id = await insertJob(db, { name: 'work', retryTimes: 3, maxRetries: 2, lastError: 'claim x expired' });
    await withWorker(sluice, [work], {}, () => waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' }));
    expect(calls).toBe(0);
    expect((await deadRow(db, id))?.last_error).toContain('retries exhausted');
    expect(events['job:dead']).toEqual([
      expect.objectContaining({ jobId: id, error: expect.any(RetriesExhaustedError) }),
    ]);
    expect(events['job:dead'][0]?.error).toMatchObject({
      retryTimes: 3,
      maxRetries: 2,
      code: 'SLUICE_RETRIES_EXHAUSTED',
    });
  });
});
