import { describe, expect, it } from 'vitest';
import {
  defineJob,
  JobCancelledError,
  JobDeadError,
  JobNotFoundError,
  OptionsError,
  PermanentJobError,
  WaitTimeoutError,
} from '../../src/index.ts';
import { countRows, fromNow, HOUR, insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Results and progress": a handler's return value is kept (as JSON, up to
 * maxResultBytes) with the finished job and returned by jobs.get and jobs.waitFor; one too big, or
 * one JSON would store changed (a NaN), is dropped with a `result:dropped` warning while the job
 * still succeeds. ctx.progress is written by
 * the heartbeat, and a job that never reports progress writes nothing for it; a progress value
 * too big or not JSON is dropped with a `progress:dropped` warning, never failing the attempt.
 */
const db = useTestDatabase('jobs_results');

describe('results', () => {
  it('keeps what each handler returned, through the batched completion, and waitFor resolves with it', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const square = defineJob<{ n: number }>({ name: 'square', handle: ({ n }) => ({ n, square: n * n }) });
    const silent = defineJob({ name: 'silent', handle: () => undefined });
    const ids: number[] = [];
    for (let n = 1; n <= 20; n++) ids.push((await sluice.enqueue({ name: 'square', queue: 'r', payload: { n } })).id);
    const { id: silentId } = await sluice.enqueue({ name: 'silent', queue: 'r' });
    await withWorker(sluice, [square, silent], { queues: ['r'], concurrency: 20 }, async () => {
      // waitFor from another install: what a web app would do while a worker runs the job.
      expect(await db.open().jobs.waitFor(ids[6] as number, { timeoutMs: 30_000 })).toEqual({ n: 7, square: 49 });
      await waitFor(() => events['job:completed'].length === 21, { what: '21 completed' });
    });
    for (const [i, id] of ids.entries()) {
      expect(await sluice.jobs.get(id)).toMatchObject({
        state: 'completed',
        result: { n: i + 1, square: (i + 1) ** 2 },
      });
    }
    expect((await sluice.jobs.get(silentId))?.result).toBeUndefined();
    expect(await sluice.jobs.waitFor(silentId)).toBeUndefined();
    expect(events['result:dropped']).toEqual([]);
  });

  it('drops a result over maxResultBytes (or not JSON) with a warning; the job still succeeds', async () => {
    const sluice = db.open({ maxResultBytes: 100 });
    const events = recordEvents(sluice);
    const big = defineJob({ name: 'big', handle: () => 'x'.repeat(200) });
    const odd = defineJob({ name: 'odd', handle: () => ({ n: 10n }) });
    const lossy = defineJob({ name: 'lossy', handle: () => ({ lines: [{ total: Number.NaN }] }) });
    const fits = defineJob({ name: 'fits', handle: () => ({ text: 'x'.repeat(50), at: new Date(0) }) });
    const { id: bigId } = await sluice.enqueue({ name: 'big', queue: 'b' });
    const { id: oddId } = await sluice.enqueue({ name: 'odd', queue: 'b' });
    const { id: lossyId } = await sluice.enqueue({ name: 'lossy', queue: 'b' });
    const { id: fitsId } = await sluice.enqueue({ name: 'fits', queue: 'b' });
    await withWorker(sluice, [big, odd, lossy, fits], { queues: ['b'] }, () =>
      waitFor(() => events['job:completed'].length === 4, { what: '4 completed' }),
    );
    expect(await sluice.jobs.get(bigId)).toMatchObject({ state: 'completed', result: undefined });
    expect(await sluice.jobs.get(oddId)).toMatchObject({ state: 'completed', result: undefined });
    // Not stored as {"lines":[{"total":null}]}: a result is kept as given or not at all.
    expect(await sluice.jobs.get(lossyId)).toMatchObject({ state: 'completed', result: undefined });
    expect(await sluice.jobs.get(fitsId)).toMatchObject({
      state: 'completed',
      result: { text: 'x'.repeat(50), at: '1970-01-01T00:00:00.000Z' },
    });
    expect(events['result:dropped']).toHaveLength(3);
    expect(events['result:dropped']).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          jobId: bigId,
          reason: expect.stringContaining('202 bytes as JSON, over the limit of 100'),
        }),
        expect.objectContaining({
          jobId: oddId,
          reason: expect.stringContaining('not JSON-serialisable: result.n is a BigInt'),
        }),
        expect.objectContaining({
          jobId: lossyId,
          reason: 'the result is not plain JSON: result.lines[0].total is NaN, which JSON stores as null',
        }),
      ]),
    );
    expect(() => db.open({ maxResultBytes: -1 })).toThrow(OptionsError);
  });

  it('keeps an exactly-once handler’s result in its transaction', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const tx = defineJob({ name: 'tx', delivery: 'exactly-once', handle: () => ({ committed: true }) });
    const { id } = await sluice.enqueue({ name: 'tx', queue: 't' });
    await withWorker(sluice, [tx], { queues: ['t'] }, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'completed' }),
    );
    expect(await sluice.jobs.waitFor(id)).toEqual({ committed: true });
  });

  it('waitFor rejects with the job’s end: dead, cancelled, not found, or the timeout', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const fail = defineJob({
      name: 'fail',
      handle() {
        throw new PermanentJobError('card declined');
      },
    });
    const { id: deadId } = await sluice.enqueue({ name: 'fail', queue: 'w' });
    const waiting = sluice.jobs.waitFor(deadId, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    await withWorker(sluice, [fail], { queues: ['w'] }, () =>
      waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' }),
    );
    const error = await waiting;
    expect(error).toBeInstanceOf(JobDeadError);
    expect(error).toMatchObject({ code: 'SLUICE_JOB_DEAD', jobId: deadId });
    expect((error as JobDeadError).message).toContain('card declined');

    const delayed = await insertJob(db, { runAt: fromNow(HOUR) });
    await expect(sluice.jobs.waitFor(delayed, { timeoutMs: 50 })).rejects.toBeInstanceOf(WaitTimeoutError);
    // (Caught at once: the wait may see the cancel before the assertion below attaches.)
    const cancelledWait = sluice.jobs.waitFor(delayed, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    await sluice.jobs.cancel(delayed);
    expect(await cancelledWait).toBeInstanceOf(JobCancelledError);
    await expect(sluice.jobs.waitFor(987_654)).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('waitFor polls at most every 25 ms: a shorter maxPollMs is refused by name', async () => {
    const sluice = db.open();
    const delayed = await insertJob(db, { runAt: fromNow(HOUR) });
    await expect(sluice.jobs.waitFor(delayed, { maxPollMs: 1 })).rejects.toThrow(
      /option maxPollMs must be an integer in \[25,/,
    );
    let polls = 0;
    const count = () => polls++;
    sluice.knex.on('query', count);
    await expect(sluice.jobs.waitFor(delayed, { maxPollMs: 25, timeoutMs: 500 })).rejects.toBeInstanceOf(
      WaitTimeoutError,
    );
    sluice.knex.off('query', count);
    // A poll, then one per pause of at least 25 ms until the deadline.
    expect(polls).toBeLessThanOrEqual(500 / 25 + 1);
  });
});

describe('progress', () => {
  it('is written by the heartbeat (latest value only), and costs nothing for jobs that never report it', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const release = deferred();
    const reported = deferred();
    const errors: unknown[] = [];
    const steps = defineJob({
      name: 'steps',
      async handle(_payload, ctx) {
        for (const bad of ['x'.repeat(5_000), () => 1, { n: 10n }, { seen: new Set([1]) }]) {
          try {
            ctx.progress(bad);
          } catch (error) {
            errors.push(error);
          }
        }
        for (let i = 1; i <= 100; i++) ctx.progress(i);
        reported.resolve();
        await Promise.race([release.promise, aborted(ctx.signal)]);
      },
    });
    const plain = defineJob({ name: 'plain', handle: () => undefined });
    for (let i = 0; i < 10; i++) await sluice.enqueue({ name: 'plain', queue: 'p' });
    const { id } = await sluice.enqueue({ name: 'steps', queue: 'p' });
    const writes: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => {
      if (/INSERT INTO `sluice_job_progress`/.test(q.sql)) writes.push(q.sql);
    });
    await withWorker(sluice, [steps, plain], { queues: ['p'], heartbeatIntervalMs: 100 }, async () => {
      await reported.promise;
      await waitFor(async () => (await sluice.jobs.get(id))?.progress?.value === 100, { what: 'progress 100' });
      // Later beats with no new progress write nothing.
      const afterFirst = writes.length;
      await waitFor(() => events['job:completed'].length === 10, { what: 'the plain jobs' });
      expect(writes.length).toBe(afterFirst);
      release.resolve();
      await waitFor(() => events['job:completed'].length === 11, { what: 'all completed' });
    });
    expect(writes).toHaveLength(1);
    expect(await countRows(db, 'sluice_job_progress')).toBe(1);
    // A value too big or not JSON is dropped with a warning; the attempt went on and completed.
    expect(errors).toEqual([]);
    expect(events['progress:dropped'].map((e) => e.reason)).toEqual([
      expect.stringContaining('over the limit of 4096'),
      expect.stringContaining('not JSON-serialisable'),
      expect.stringContaining('not JSON-serialisable'),
      expect.stringContaining('not plain JSON: progress.seen is a Set'),
    ]);
    expect(events['job:failed']).toEqual([]);
  });

  it('is pruned with the history retention once its job finished, never while it lives', async () => {
    const live = await insertJob(db, {});
    await db.query(
      `INSERT INTO sluice_job_progress (job_id, progress, updated_at) VALUES (?, '1', NOW(3) - INTERVAL 2 DAY), (999999, '2', NOW(3) - INTERVAL 2 DAY), (999998, '3', NOW(3))`,
      [live],
    );
    const pass = await db.sluice.maintenance({ jitterMs: 0 }).runOnce();
    expect(pass.tasks.pruneProgress).toEqual({ pruned: 1 });
    const left = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_progress ORDER BY job_id');
    expect(left.map((r) => Number(r.job_id))).toEqual([live, 999998]);
  });
});
