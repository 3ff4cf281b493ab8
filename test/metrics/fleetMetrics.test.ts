import { beforeAll, describe, expect, it } from 'vitest';
import { SluiceMetrics } from '../../src/index.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The scrape runs in one process and the workers in others: what each worker process counted
 * reaches `sluice metrics` through its registry row, labelled by that worker, and adds up across
 * the fleet in PromQL's `sum by (queue, name)`.
 */
const db = useTestDatabase('fleet_metrics');

beforeAll(() => createFixtureTables(db));

/** Sample lines of one metric, as [labels, value]. */
function samples(text: string, name: string): [Record<string, string>, number][] {
  const found: [Record<string, string>, number][] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    found.push([labels as Record<string, string>, Number(match[3])]);
  }
  return found;
}

describe('metrics of a fleet of worker processes', () => {
  it('each worker process’s counters and histograms reach the scrape in its own series, and add up to the jobs run', async () => {
    const flags = {
      queues: 'fleet',
      concurrency: 2,
      heartbeatIntervalMs: 200,
      pollIntervalMs: 50,
      metricsIntervalMs: 0,
    };
    const workers = [spawnWorker(db.url, flags), spawnWorker(db.url, flags)];
    await Promise.all(workers.map((w) => w.ready));
    try {
      await db.sluice.enqueueBatch(
        Array.from({ length: 12 }, (_, n) => ({ name: 'record', queue: 'fleet', payload: { n } })),
      );
      await waitFor(async () => (await countRows(db, 'test_effects')) === 12, { what: 'the 12 jobs run' });
      const metrics = new SluiceMetrics(db.sluice, 0);
      const text = await waitFor(
        async () => {
          const t = await metrics.render();
          const completed = samples(t, 'sluice_job_outcomes_total')
            .filter(([l]) => l.name === 'record' && l.outcome === 'completed')
            .reduce((sum, [, v]) => sum + v, 0);
          return completed === 12 ? t : undefined;
        },
        { what: 'the workers’ heartbeats carrying all 12 completions' },
      );
      const names = new Set(workers.map((w) => `pid-${w.pid}`));
      const series = samples(text, 'sluice_job_outcomes_total').filter(
        ([l]) => l.name === 'record' && l.outcome === 'completed',
      );
      // One series per worker process that ran any, labelled by it.
      for (const [labels] of series) expect(names.has(labels.worker as string)).toBe(true);
      const latency = samples(text, 'sluice_job_start_latency_seconds_count').filter(([l]) => l.queue === 'fleet');
      expect(latency.reduce((sum, [, v]) => sum + v, 0)).toBe(12);
      const attempts = samples(text, 'sluice_job_attempt_duration_seconds_count').filter(([l]) => l.name === 'record');
      expect(attempts.reduce((sum, [, v]) => sum + v, 0)).toBe(12);
      const claimed = samples(text, 'sluice_jobs_claimed_total').filter(([l]) => l.name === 'record');
      expect(claimed.reduce((sum, [, v]) => sum + v, 0)).toBe(12);
      expect(
        samples(text, 'sluice_worker_resident_memory_bytes')
          .map(([l]) => l.worker)
          .sort(),
      ).toEqual([...names].sort());
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });
});
