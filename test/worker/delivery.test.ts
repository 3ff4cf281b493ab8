import { describe, expect, it } from 'vitest';
import { type Delivery, defineJob, JobDefinitionError } from '../../src/index.ts';
import { useAppEffects } from '../helpers/appEffects.ts';
import { countRows, deadRow, jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Delivery modes": exactly-once commits the handler's writes through ctx.trx with the
 * job's fenced delete (a failure or a lost claim rolls them back), at-most-once deletes the job
 * before the handler runs and never retries, at-least-once (the default) deletes only after
 * success and retries failures. Exactly-once's own tests: deliveryExactlyOnce.test.ts.
 */
const db = useTestDatabase('sem_delivery');

const effects = useAppEffects(db);

describe('at-most-once', () => {
  it('deletes the job before the handler runs', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const rowSeenByHandler: unknown[] = [];
    const notify = defineJob({
      name: 'notify',
      delivery: 'at-most-once',
      async handle(_payload, ctx) {
        rowSeenByHandler.push(await ctx.knex('sluice_jobs').where({ id: ctx.job.id }).first());
        await ctx.knex('app_effects').insert({ job_id: ctx.job.id, attempt: 1 });
      },
    });
    const { id } = await sluice.enqueue({ name: 'notify' });
    await withWorker(sluice, [notify], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );
    expect(rowSeenByHandler).toEqual([undefined]);
    expect(await effects()).toEqual([{ job_id: id, attempt: 1 }]);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
  });

  it('reports a failure (job:failed) and neither retries nor dead-letters the job', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    let calls = 0;
    const notify = defineJob({
      name: 'notify',
      delivery: 'at-most-once',
      maxRetries: 5,
      backoff: { type: 'fixed', delayMs: 1 },
      handle: () => {
        calls++;
        throw new Error('smtp down');
      },
    });
    const { id } = await sluice.enqueue({ name: 'notify' });
    // stop() waits for the running job's outcome to be written, so the rows below are final.
    await withWorker(sluice, [notify], {}, () =>
      waitFor(() => events['job:failed'].length === 1, { what: 'job:failed' }),
    );
    expect(calls).toBe(1);
    expect(events['job:failed']).toEqual([
      expect.objectContaining({
        jobId: id,
        name: 'notify',
        attempt: 1,
        error: expect.objectContaining({ message: 'smtp down' }),
      }),
    ]);
    expect(events['job:retried']).toEqual([]);
    expect(events['job:dead']).toEqual([]);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(await deadRow(db, id)).toBeUndefined();
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
  });

  it('a handler running past several heartbeats is neither aborted nor reported as a lost claim, and a stop releases nothing', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    let abortedWhileRunning = false;
    const notify = defineJob({
      name: 'notify',
      delivery: 'at-most-once',
      async handle(_payload, ctx) {
        started.resolve();
        // Five heartbeats (every 200 ms): each would find the row gone if the job were still extended.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        abortedWhileRunning = ctx.signal.aborted;
      },
    });
    const { id } = await sluice.enqueue({ name: 'notify' });
    await withWorker(sluice, [notify], { lockTimeoutMs: 600, heartbeatIntervalMs: 200 }, async () => {
      await started.promise;
      await waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' });
    });
    expect(abortedWhileRunning).toBe(false);
    expect(events['claim:lost']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    expect(events['job:completed']).toEqual([expect.objectContaining({ jobId: id })]);

    // Stopped while such a handler runs: there is no claim left to release, and none is reported lost.
    const inside = deferred();
    const long = defineJob({
      name: 'long-notify',
      delivery: 'at-most-once',
      async handle(_payload, ctx) {
        inside.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      },
    });
    await sluice.enqueue({ name: 'long-notify' });
    await withWorker(
      sluice,
      [long],
      { lockTimeoutMs: 600, heartbeatIntervalMs: 200, shutdownTimeoutMs: 100 },
      () => inside.promise,
    );
    expect(events['claim:lost']).toEqual([]);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
  });
});

describe('at-least-once (the default)', () => {
  it('runs with the job still claimed and no ctx.trx, retries a failure, and deletes after success', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const seen: { retryTimes: number; claimedByUs: boolean; trx: unknown }[] = [];
    const work = defineJob({
      name: 'work',
      backoff: { type: 'fixed', delayMs: 1 },
      async handle(_payload, ctx) {
        const row = await ctx.knex('sluice_jobs').where({ id: ctx.job.id }).first();
        seen.push({ retryTimes: ctx.job.retryTimes, claimedByUs: row?.lock_id === ctx.job.lockId, trx: ctx.trx });
        await ctx.knex('app_effects').insert({ job_id: ctx.job.id, attempt: ctx.job.retryTimes + 1 });
        if (ctx.job.retryTimes === 0) throw new Error('first attempt fails');
      },
    });
    const { id } = await sluice.enqueue({ name: 'work' });
    await withWorker(sluice, [work], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );
    expect(seen).toEqual([
      { retryTimes: 0, claimedByUs: true, trx: undefined },
      { retryTimes: 1, claimedByUs: true, trx: undefined },
    ]);
    // Writes through another connection are not transactional with the job: both attempts' stay.
    expect(await effects()).toEqual([
      { job_id: id, attempt: 1 },
      { job_id: id, attempt: 2 },
    ]);
    expect(events['job:retried'].map((e) => [e.jobId, e.retryTimes])).toEqual([[id, 1]]);
    expect(await jobRow(db, id)).toBeUndefined();
  });
});

describe('defineJob', () => {
  it('rejects an unknown delivery value and accepts the three modes', () => {
    expect(() => defineJob({ name: 'x', delivery: 'twice' as Delivery, handle: () => undefined })).toThrow(
      JobDefinitionError,
    );
    expect(() => defineJob({ name: 'x', delivery: 'twice' as Delivery, handle: () => undefined })).toThrow(
      /delivery must be .*"twice"/,
    );
    for (const delivery of ['at-least-once', 'exactly-once', 'at-most-once'] as const) {
      expect(defineJob({ name: 'x', delivery, handle: () => undefined }).delivery).toBe(delivery);
    }
  });
});
