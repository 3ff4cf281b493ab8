import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { quantileMs } from '../../src/dashboard/queueTimings.ts';
import { defineJob } from '../../src/index.ts';
import { ATTEMPT_DURATION_BUCKETS_S } from '../../src/worker/metricsSnapshot.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * A queue's page shows its wait and run time per job name, p50 and p95, from the histograms its
 * live workers send with their heartbeats: a job that sleeps 300 ms reads "≤ 500 ms", a job that
 * fails shows its failed attempts.
 */
const db = useTestDatabase('queue_timings');
const dashboard = useDashboard(() => db.sluice, { auth: false });

const nap = defineJob({ name: 'nap', queue: 'timed', handle: () => sleep(300) });
const boom = defineJob({
  name: 'boom',
  queue: 'timed',
  maxRetries: 0,
  handle: () => {
    throw new Error('boom');
  },
});

const rowOf = (page: string, name: string) =>
  new RegExp(`<tr data-job-name="${name}"[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';

describe('wait and run time on the queue page', () => {
  it('reads a histogram quantile as the bucket it falls in', () => {
    const bounds = ATTEMPT_DURATION_BUCKETS_S;
    const buckets = new Array(bounds.length + 1).fill(0);
    buckets[6] = 9; // (0.25, 0.5]
    buckets[7] = 1; // (0.5, 1]
    expect(quantileMs(buckets, bounds, 0.5)).toBe(500);
    expect(quantileMs(buckets, bounds, 0.95)).toBe(1000);
    expect(quantileMs([], bounds, 0.5)).toBeNull();
  });

  it('shows p50 and p95 per job name from the live workers, and the failures', async () => {
    await db.sluice.enqueueBatch([
      ...Array.from({ length: 4 }, () => ({ name: 'nap', queue: 'timed' })),
      { name: 'boom', queue: 'timed' },
    ]);
    await withWorker(
      db.sluice,
      [nap, boom],
      { queues: ['timed'], concurrency: 5, heartbeatIntervalMs: 200, metricsIntervalMs: 0 },
      async () => {
        const page = await waitFor(
          async () => {
            const text = await (await fetch(`${dashboard.url}/queues/timed`)).text();
            // All four naps completed (attempts, completed) and the boom dead.
            const done =
              rowOf(text, 'nap').includes('<td class="num">4</td><td class="num">4</td>') &&
              /<td class="num">1<\/td><td class="num">0<\/td><td class="num">1<\/td><td class="num">1<\/td>/.test(
                rowOf(text, 'boom'),
              );
            return done ? text : undefined;
          },
          { what: 'the worker’s metrics of the five jobs on the queue page' },
        );
        expect(['≤ 500 ms', '≤ 1 s']).toContain(/data-p50>([^<]*)</.exec(rowOf(page, 'nap'))?.[1]);
        expect(page).toMatch(/Wait \(due to claimed\), p50 ≤ /);
      },
    );
  });
});
