import { describe, expect, it } from 'vitest';
import { type ClaimStrategy, defineJob, type JobSpec, type WorkerOptions } from '../../src/index.ts';
import { jobRow, NO_CLAIM } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, msUntilRunAt, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Time and order": runAt / delayMs on the DB clock (never claimed before then); lower
 * priority values first; within a priority, earlier run_at, then id (FIFO); order is per queue.
 */
const db = useTestDatabase('sem_time_order');

describe('delayed jobs', () => {
  for (const claim of ['random-head', 'skip-locked'] as const) {
    it(`are not claimed before they are due, and are claimed once due (${claim})`, async () => {
      const sluice = db.open();
      const events = recordEvents(sluice);
      const ran: string[] = [];
      const job = defineJob<{ tag: string }>({ name: 'job', handle: (payload) => void ran.push(payload.tag) });
      const delayed = await sluice.enqueue({ name: 'job', payload: { tag: 'delayMs' }, delayMs: 3_600_000 });
      const scheduled = await sluice.enqueue({
        name: 'job',
        payload: { tag: 'runAt' },
        runAt: new Date(Date.now() + 2 * 3_600_000),
      });
      // delayMs counts from NOW(3) on the database clock.
      const ahead = await msUntilRunAt(db, delayed.id);
      expect(ahead).toBeGreaterThan(3_590_000);
      expect(ahead).toBeLessThanOrEqual(3_600_000);
      expect(await msUntilRunAt(db, scheduled.id)).toBeGreaterThan(7_000_000);

      await withWorker(sluice, [job], { claim, concurrency: 10 }, async () => {
        // A due job enqueued after them (same queue and priority) runs; the worker's claims pass the delayed ones by.
        await sluice.enqueue({ name: 'job', payload: { tag: 'due' } });
        await waitFor(() => ran.includes('due'), { what: 'the due job' });
        await sluice.enqueue({ name: 'job', payload: { tag: 'due again' } });
        await waitFor(() => ran.includes('due again'), { what: 'the second due job' });
        expect(ran).toEqual(['due', 'due again']);
        expect(await jobRow(db, delayed.id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 0 });
        expect(await jobRow(db, scheduled.id)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 0 });

        // Time passes (on the DB clock): both become due.
        await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 SECOND WHERE id IN (?, ?)', [
          delayed.id,
          scheduled.id,
        ]);
        await waitFor(() => ran.length === 4, { what: 'the delayed jobs, once due' });
      });
      expect(ran.slice(2).sort()).toEqual(['delayMs', 'runAt']);
      expect(events['job:completed']).toHaveLength(4);
    });
  }
});

/** Runs the queue with one slot and returns the payload tags in the order the handler saw them. */
async function runOrder(options: WorkerOptions, count: number): Promise<string[]> {
  const sluice = db.open();
  const order: string[] = [];
  const job = defineJob<{ tag: string }>({ name: 'job', handle: (payload) => void order.push(payload.tag) });
  await withWorker(sluice, [job], { concurrency: 1, queues: ['ordered'], ...options }, () =>
    waitFor(() => order.length === count, { what: `${count} jobs run` }),
  );
  return order;
}

const spec = (tag: string, priority: number): JobSpec => ({
  name: 'job',
  queue: 'ordered',
  priority,
  payload: { tag },
});

describe('priority and FIFO', () => {
  it('a single slot takes lower priority values first, with the default claim', async () => {
    // One job per priority, enqueued out of order.
    await db.sluice.enqueueBatch([
      spec('p3', 3),
      spec('p-7', -7),
      spec('p12', 12),
      spec('p0', 0),
      spec('p-1', -1),
      spec('p5', 5),
    ]);
    expect(await runOrder({}, 6)).toEqual(['p-7', 'p-1', 'p0', 'p3', 'p5', 'p12']);
  });

  for (const [label, options] of [
    ['skip-locked', { claim: 'skip-locked' as ClaimStrategy }],
    ['random-head with headSize 1', { claim: 'random-head' as ClaimStrategy, headSize: 1 }],
  ] as const) {
    it(`a single slot runs by priority, then run_at, then id (FIFO) — ${label}`, async () => {
      await db.sluice.enqueueBatch([
        spec('a', 5),
        spec('b', -3),
        spec('c', 0),
        spec('d', 5),
        spec('e', 0),
        spec('f', -3),
        spec('g', 10),
      ]);
      // Later run_at within priority 0, and an older run_at that jumps ahead of c and e.
      await db.sluice.enqueue(spec('h', 0));
      const { id: early } = await db.sluice.enqueue(spec('i', 0));
      await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 MINUTE WHERE id = ?', [early]);
      // Another queue's jobs are not this worker's and do not disturb the order.
      await db.sluice.enqueue({ name: 'job', queue: 'other', priority: -100, payload: { tag: 'other' } });
      expect(await runOrder(options, 9)).toEqual(['b', 'f', 'i', 'c', 'e', 'h', 'a', 'd', 'g']);
      expect(
        await jobRow(
          db,
          (await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE queue = 'other'"))[0]?.id as number,
        ),
      ).toMatchObject({
        lock_id: '',
      });
    });
  }

  it('claims a job whose priority value the queue never had, without waiting for the cached priority set to age out', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const gate = deferred();
    const started: string[] = [];
    const job = defineJob<{ tag: string }>({
      name: 'job',
      handle: async (payload) => {
        started.push(payload.tag);
        if (payload.tag === 'first') await gate.promise;
      },
    });
    await sluice.enqueue({ name: 'job', priority: 0, payload: { tag: 'first' } });
    // The priority set is cached for pollIntervalMs (a minute here), and an empty poll sleeps as long:
    // only the refresh on a short head lets the worker see priority 7 when its slot frees.
    await withWorker(sluice, [job], { concurrency: 1, pollIntervalMs: 60_000 }, async () => {
      try {
        await waitFor(() => started.length === 1, { what: 'the first job running' });
        await sluice.enqueue({ name: 'job', priority: 7, payload: { tag: 'new priority' } });
        gate.resolve();
        await waitFor(() => events['job:completed'].length === 2, {
          what: 'the job with the new priority',
          timeoutMs: 15_000,
        });
      } finally {
        gate.resolve(); // never leave a handler hanging when the test fails
      }
    });
    expect(started).toEqual(['first', 'new priority']);
  });
});
