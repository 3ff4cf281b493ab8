import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { workerKeyOf } from '../../src/model/claimKey.ts';
import { jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { aborted, deferred, openRecorded } from '../helpers/workerHarness.ts';

/** Worker.stop(): it waits for running jobs up to shutdownTimeoutMs, then releases their claims. */
const db = useTestDatabase('worker_shutdown');

describe('Worker', () => {
  it('stop() waits for a running job that finishes within shutdownTimeoutMs', async () => {
    const { sluice, events } = openRecorded(db);
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
    const { sluice, events } = openRecorded(db);
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
});
