import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A finished job's startedAt is when its last attempt was claimed, on the DB clock: the start of
 * its run, whatever its heartbeats did meanwhile. It was the claim's locked_at, which every
 * heartbeat moves on (the lock timeout counts from it), so a job that ran for seconds was recorded
 * as started at its last beat. Its run time — finishedAt − startedAt, which the dashboard charts —
 * read as under one heartbeat interval.
 */
const db = useTestDatabase('history_started_at');

describe('history startedAt', () => {
  it('is the claim time of a job that ran across many heartbeats, at-least-once and exactly-once', async () => {
    const sluice = db.open();
    const slow = defineJob({ name: 'slow', handle: () => new Promise((r) => setTimeout(r, 1_200)) });
    const slowOnce = defineJob({
      name: 'slow-once',
      delivery: 'exactly-once',
      handle: () => new Promise((r) => setTimeout(r, 1_200)),
    });
    const worker = sluice.worker({
      queues: ['started'],
      concurrency: 2,
      jobs: [slow, slowOnce],
      heartbeatIntervalMs: 100,
      pollIntervalMs: 20,
    });
    const a = await sluice.enqueue({ name: 'slow', queue: 'started' });
    const b = await sluice.enqueue({ name: 'slow-once', queue: 'started' });
    await worker.start();
    try {
      // Running: the claim time, which the beats do not move.
      const running = await waitFor(async () => {
        const j = await sluice.jobs.get(a.id);
        return j?.state === 'running' && j.startedAt !== null ? j : null;
      });
      await new Promise((r) => setTimeout(r, 400));
      expect((await sluice.jobs.get(a.id))?.startedAt).toEqual(running.startedAt);
      for (const { id } of [a, b]) {
        const job = await waitFor(async () => {
          const j = await sluice.jobs.get(id);
          return j?.state === 'completed' ? j : null;
        });
        const ranMs = (job.finishedAt as Date).getTime() - (job.startedAt as Date).getTime();
        expect(
          ranMs,
          `job ${id}: ${job.startedAt?.toISOString()} → ${job.finishedAt?.toISOString()}`,
        ).toBeGreaterThanOrEqual(1_150);
        expect(ranMs).toBeLessThan(10_000);
      }
    } finally {
      await worker.stop();
    }
  });
});
