import { describe, expect, it } from 'vitest';
import { type ClaimStrategy, defineJob, type Sluice, type Worker } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

const db = useTestDatabase('concurrent_enqueue');

const JOBS = 10_000;

describe('a batch enqueued while workers claim from the same queue', () => {
  it('8 workers (4 random-head, 4 skip-locked) run each of 10,000 jobs exactly once, with no failure or error', async () => {
    const handled = new Map<number, number>();
    const payloads: number[] = [];
    const byWorker = new Map<string, number>();
    const problems: { event: string; detail: unknown }[] = [];
    const job = defineJob<{ n: number }>({
      name: 'count',
      handle: (payload, ctx) => {
        payloads.push(payload.n);
        handled.set(ctx.job.id, (handled.get(ctx.job.id) ?? 0) + 1);
      },
    });

    const strategies: ClaimStrategy[] = [
      'random-head',
      'skip-locked',
      'random-head',
      'skip-locked',
      'random-head',
      'skip-locked',
      'random-head',
      'skip-locked',
    ];
    const instances: Sluice[] = [];
    const workers: Worker[] = [];
    for (const claim of strategies) {
      const sluice = db.open({ poolMax: 12 });
      instances.push(sluice);
      for (const event of ['worker:error', 'job:failed', 'claim:lost', 'job:dead'] as const) {
        sluice.events.on(event, (detail) => problems.push({ event, detail }));
      }
      sluice.events.on('job:completed', ({ workerId }) =>
        byWorker.set(`${claim} ${workerId}`, (byWorker.get(`${claim} ${workerId}`) ?? 0) + 1),
      );
      workers.push(sluice.worker({ jobs: [job], queues: ['bulk'], concurrency: 10, claim, pollIntervalMs: 10 }));
    }

    try {
      await Promise.all(workers.map((w) => w.start()));
      const result = await db.sluice.enqueueBatch(
        Array.from({ length: JOBS }, (_, n) => ({ name: 'count', queue: 'bulk', payload: { n } })),
      );
      expect(result.count).toBe(JOBS);
      await waitFor(async () => handled.size === JOBS && (await countRows(db, 'sluice_jobs')) === 0, {
        timeoutMs: 110_000,
        intervalMs: 100,
        what: `all ${JOBS} jobs handled and deleted`,
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }

    expect(problems).toEqual([]);
    const repeated = [...handled].filter(([, count]) => count !== 1);
    expect(repeated).toEqual([]);
    expect(handled.size).toBe(JOBS);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    // Every payload of the batch was seen once, and the completions add up.
    expect([...payloads].sort((a, b) => a - b)).toEqual(Array.from({ length: JOBS }, (_, n) => n));
    expect([...byWorker.values()].reduce((a, b) => a + b, 0)).toBe(JOBS);
    // Both strategies took part.
    for (const claim of ['random-head', 'skip-locked']) {
      const done = [...byWorker].filter(([key]) => key.startsWith(`${claim} `)).reduce((a, [, n]) => a + n, 0);
      expect(done, `jobs completed by ${claim} workers`).toBeGreaterThan(0);
    }
  });
});
