import { describe, expect, it } from 'vitest';
import {
  defineJob,
  HandlerTimeoutError,
  PermanentJobError,
  RetriesExhaustedError,
  type Sluice,
  UnknownJobTypeError,
} from '../../src/index.ts';
import { workerKeyOf } from '../../src/model/claimKey.ts';
import { countRows, deadRow, insertJob, jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, deferred, type Recorded, recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('worker');

/** A fresh instance per test, so each test sees only its own events. */
function setup(): { sluice: Sluice; events: Recorded } {
  const sluice = db.open();
  return { sluice, events: recordEvents(sluice) };
}

describe('Worker', () => {
  it('runs jobs and deletes them, emitting job:completed for each', async () => {
    const { sluice, events } = setup();
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
    const { sluice, events } = setup();
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
    const { sluice } = setup();
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
    const { sluice, events } = setup();
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
    const { sluice, events } = setup();
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

  it('fails a job with no handler through the retry path, with UnknownJobTypeError in last_error', async () => {
    const { sluice, events } = setup();
    const known = defineJob({ name: 'known', handle: () => undefined });
    const { id } = await sluice.enqueue({ name: 'ghost', maxRetries: 3 });
    await withWorker(sluice, [known], { backoff: { type: 'fixed', delayMs: 3_600_000 } }, () =>
      waitFor(async () => (await jobRow(db, id))?.retry_times === 1, { what: 'the job released for a retry' }),
    );
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 1 });
    expect(row?.last_error).toContain('UnknownJobTypeError: no handler for job name "ghost" (known: known)');
    const [{ ahead }] = (await db.query<{ ahead: number }>(
      'SELECT TIMESTAMPDIFF(MINUTE, NOW(3), run_at) AS ahead FROM sluice_jobs WHERE id = ?',
      [id],
    )) as [{ ahead: number }];
    expect(Number(ahead)).toBeGreaterThan(50);
    expect(events['job:failed'].map((e) => e.error)).toEqual([expect.any(UnknownJobTypeError)]);
    expect(events['job:retried']).toEqual([expect.objectContaining({ jobId: id, retryTimes: 1, delayMs: 3_600_000 })]);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
  });

  it('aborts ctx.signal when timeoutMs passes and counts the attempt as failed, even if the handler then returns', async () => {
    const { sluice, events } = setup();
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
    const { sluice, events } = setup();
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

  it('stop() waits for a running job that finishes within shutdownTimeoutMs', async () => {
    const { sluice, events } = setup();
    const started = deferred();
    const gate = deferred();
    const gated = defineJob({
      name: 'gated',
      handle: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'gated' });
    const worker = sluice.worker({ jobs: [gated], pollIntervalMs: 20, shutdownTimeoutMs: 60_000 });
    await worker.start();
    await started.promise;
    const stopping = worker.stop();
    expect(worker.state).toBe('stopping');
    gate.resolve();
    await stopping;
    expect(worker.state).toBe('stopped');
    expect(await jobRow(db, id)).toBeUndefined();
    expect(events['job:completed'].map((e) => e.jobId)).toEqual([id]);
    expect(events['worker:stopped']).toEqual([expect.objectContaining({ released: 0 })]);
  });

  it('stop() releases the claim of a job still running after shutdownTimeoutMs, without counting a retry', async () => {
    const { sluice, events } = setup();
    const started = deferred();
    let signal: AbortSignal | undefined;
    const stuck = defineJob({
      name: 'stuck',
      handle: async (_payload, ctx) => {
        signal = ctx.signal;
        started.resolve();
        await aborted(ctx.signal);
      },
    });
    const { id } = await sluice.enqueue({ name: 'stuck', maxRetries: 3 });
    const worker = sluice.worker({ jobs: [stuck], pollIntervalMs: 20, shutdownTimeoutMs: 100 });
    await worker.start();
    await started.promise;
    expect(String((await jobRow(db, id))?.lock_id).startsWith(`${workerKeyOf(worker.id)}.`)).toBe(true);
    await worker.stop();

    expect(signal?.aborted).toBe(true);
    expect(await jobRow(db, id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 0, last_error: null });
    expect(events['worker:stopped']).toEqual([expect.objectContaining({ released: 1 })]);
    expect(events['job:completed']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    expect(events['worker:error']).toEqual([]);
    // The handler returned after its claim was released: nothing was written for it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 0 });
  });

  it('heartbeats extend the claim of a long-running job', async () => {
    const { sluice } = setup();
    const started = deferred();
    const gate = deferred();
    const long = defineJob({
      name: 'long',
      handle: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'long' });
    await withWorker(sluice, [long], { lockTimeoutMs: 30_000, heartbeatIntervalMs: 100 }, async () => {
      await started.promise;
      await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?', [id]);
      await waitFor(
        async () => {
          const [row] = await db.query<{ age: number }>(
            'SELECT TIMESTAMPDIFF(SECOND, locked_at, NOW(3)) AS age FROM sluice_jobs WHERE id = ?',
            [id],
          );
          return row !== undefined && Number(row.age) < 60;
        },
        { what: 'locked_at extended by a heartbeat' },
      );
      gate.resolve();
      await waitFor(async () => (await jobRow(db, id)) === undefined, { what: 'the job completed' });
    });
  });

  it('aborts a handler whose claim was swept, and its late completion cannot delete the next claim', async () => {
    const { sluice, events } = setup();
    const attempts: { retryTimes: number; lockId: string; signal: AbortSignal }[] = [];
    const second = deferred();
    const job = defineJob({
      name: 'swept',
      handle: async (_payload, ctx) => {
        attempts.push({ retryTimes: ctx.job.retryTimes, lockId: ctx.job.lockId, signal: ctx.signal });
        if (ctx.job.retryTimes === 0) await aborted(ctx.signal);
        else await second.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'swept', maxRetries: 5 });
    await withWorker(sluice, [job], { lockTimeoutMs: 30_000, heartbeatIntervalMs: 100 }, async () => {
      await waitFor(() => attempts.length === 1, { what: 'the first attempt' });
      // What the sweeper does to an expired claim.
      await db.query(
        "UPDATE sluice_jobs SET lock_id = '', locked_at = DEFAULT, retry_times = retry_times + 1 WHERE id = ?",
        [id],
      );
      await waitFor(() => attempts.length === 2, { what: 'the second attempt' });
      await waitFor(() => attempts[0]?.signal.aborted, { what: 'the first attempt aborted by the heartbeat' });
      await waitFor(() => events['claim:lost'].some((e) => e.operation === 'complete'), {
        what: 'the late completion refused',
      });
      // The second claim still holds the job.
      expect(await jobRow(db, id)).toMatchObject({ lock_id: attempts[1]?.lockId, retry_times: 1 });
      second.resolve();
      await waitFor(async () => (await jobRow(db, id)) === undefined, { what: 'the second attempt completed' });
    });
    expect(attempts.map((a) => a.retryTimes)).toEqual([0, 1]);
    expect(attempts[0]?.lockId).not.toBe(attempts[1]?.lockId);
    expect(events['claim:lost'].map((e) => [e.operation, e.lockId])).toEqual(
      expect.arrayContaining([
        ['extend', attempts[0]?.lockId],
        ['complete', attempts[0]?.lockId],
      ]),
    );
    expect(events['job:completed'].map((e) => e.jobId)).toEqual([id]);
  });

  it('with history, one lost claim in a completion batch does not hold back its finished siblings', async () => {
    const { sluice, events } = setup();
    const gate = deferred();
    const running: number[] = [];
    const job = defineJob({
      name: 'sibling',
      handle: async (_payload, ctx) => {
        running.push(ctx.job.id);
        await gate.promise;
      },
    });
    const { batchId } = await sluice.enqueueBatch([{ name: 'sibling' }, { name: 'sibling' }, { name: 'sibling' }]);
    const ids = (
      await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE batch_id = ? ORDER BY id', [batchId])
    ).map((r) => Number(r.id));
    const [first, stolen, third] = ids as [number, number, number];
    await withWorker(
      sluice,
      [job],
      { concurrency: 3, claimBatchSize: 3, lockTimeoutMs: 60_000, heartbeatIntervalMs: 20_000 },
      async () => {
        await waitFor(() => running.length === 3, { what: 'all three running under one claim' });
        expect(
          new Set((await db.query<{ lock_id: string }>('SELECT lock_id FROM sluice_jobs')).map((r) => r.lock_id)).size,
        ).toBe(1);
        // Swept and claimed by another worker while its handler ran.
        await db.query("UPDATE sluice_jobs SET lock_id = 'elsewhere-1~0.1', locked_at = NOW(3) WHERE id = ?", [stolen]);
        gate.resolve();
        await waitFor(() => events['claim:lost'].length === 1, { what: 'the lost claim reported' });
        await waitFor(() => events['job:completed'].length === 2, { what: 'the two siblings completed' });
      },
    );
    expect(events['claim:lost']).toEqual([
      expect.objectContaining({ operation: 'complete', jobIds: [stolen], lost: 1 }),
    ]);
    expect(events['job:completed'].map((e) => e.jobId).sort((a, b) => a - b)).toEqual([first, third]);
    expect(await jobRow(db, first)).toBeUndefined();
    expect(await jobRow(db, third)).toBeUndefined();
    expect(await jobRow(db, stolen)).toMatchObject({ lock_id: 'elsewhere-1~0.1' });
    const history = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_history ORDER BY job_id');
    expect(history.map((r) => Number(r.job_id))).toEqual([first, third]);
  });
});
