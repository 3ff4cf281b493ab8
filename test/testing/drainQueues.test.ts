import { describe, expect, it } from 'vitest';
import { defineJob, OptionsError } from '../../src/index.ts';
import { drainQueues, enqueuedJobs } from '../../src/testing/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('testing_drain');

const double = defineJob<{ n: number }>({ name: 'double', handle: ({ n }) => n * 2 });
const broken = defineJob({
  name: 'broken',
  maxRetries: 0,
  handle: () => {
    throw new Error('broken');
  },
});
const flaky = defineJob({
  name: 'flaky',
  maxRetries: 3,
  backoff: { type: 'fixed', delayMs: 60_000 },
  handle: () => {
    throw new Error('not yet');
  },
});
const sleepy = defineJob({ name: 'sleepy', handle: (_p, ctx) => ctx.snooze(60_000) });

describe('drainQueues', () => {
  it('runs every due job of the queues and counts how each attempt ended; jobs not due stay', async () => {
    await db.sluice.enqueueBatch([
      ...Array.from({ length: 30 }, (_, n) => ({ name: 'double', queue: 'a', payload: { n } })),
      { name: 'broken', queue: 'b' },
      { name: 'flaky', queue: 'b' },
      { name: 'sleepy', queue: 'a' },
      { name: 'double', queue: 'a', payload: { n: 1 }, delayMs: 60_000 },
      { name: 'double', queue: 'elsewhere', payload: { n: 1 } },
    ]);
    const counts = await drainQueues(db.sluice, { jobs: [double, broken, flaky, sleepy], queues: ['a', 'b'] });
    expect(counts).toEqual({ completed: 30, failed: 2, dead: 1, snoozed: 1, cancelled: 0 });
    const left = await enqueuedJobs(db.sluice);
    expect(left.map((j) => `${j.queue}/${j.name}`).sort()).toEqual([
      'a/double', // delayed a minute
      'a/sleepy', // snoozed a minute
      'b/flaky', // waiting out its backoff
      'elsewhere/double', // not a drained queue
    ]);
  });

  it('returns zeros at once for empty queues', async () => {
    expect(await drainQueues(db.sluice, { jobs: [double] })).toEqual({
      completed: 0,
      failed: 0,
      dead: 0,
      snoozed: 0,
      cancelled: 0,
    });
  });

  it('throws SLUICE_TESTING_DRAIN_TIMEOUT with the counts so far when a queue does not become idle', async () => {
    await db.sluice.enqueueBatch([{ name: 'double', queue: 'held', payload: { n: 1 } }]);
    await db.sluice.queues.pause('held');
    await expect(drainQueues(db.sluice, { jobs: [double], queues: ['held'], timeoutMs: 300 })).rejects.toMatchObject({
      code: 'SLUICE_TESTING_DRAIN_TIMEOUT',
      message:
        'drainQueues: held not idle after 300 ms (1 job(s) waiting or running; so far {"completed":0,"failed":0,"dead":0,"snoozed":0,"cancelled":0})',
    });
    await db.sluice.queues.resume('held');
    expect(await drainQueues(db.sluice, { jobs: [double], queues: ['held'] })).toMatchObject({ completed: 1 });
  });

  it('refuses unknown keys, a missing jobs and bad queues before starting a worker', async () => {
    await expect(drainQueues(db.sluice, { jobs: [double], timeout: 5 } as never)).rejects.toThrow(
      new OptionsError('timeout', 'is not an option of drainQueues (did you mean timeoutMs?)'),
    );
    await expect(drainQueues(db.sluice, {} as never)).rejects.toThrow('option jobs is required');
    await expect(drainQueues(db.sluice, { jobs: [double], queues: [] })).rejects.toThrow(
      'option queues must be a list of 1 to 100 queue names',
    );
    await expect(drainQueues(db.sluice, { jobs: [double], queues: ['no spaces'] })).rejects.toThrow(OptionsError);
    expect(await db.sluice.workers.list()).toEqual([]);
  });
});
