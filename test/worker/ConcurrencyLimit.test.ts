import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineJob, type LoadReading, type SluiceEventMap } from '../../src/index.ts';
import { nextPollDelayMs } from '../../src/worker/ClaimLoop.ts';
import { nextConcurrencyLimit } from '../../src/worker/ConcurrencyLimit.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * README "Load-aware concurrency and idle polling": a worker halves the jobs it runs at once while
 * its host is loaded (CPU above maxCpu or free memory below minFreeMem), grows back by a tenth of
 * its concurrency per heartbeat when there is room, and polls an empty queue less and less often.
 */
const db = useTestDatabase('ops_load');

const POLICY = { maxCpu: 0.9, minFreeMem: 0.05 };
const CALM: LoadReading = { cpu: 0.2, freeMem: 0.5 };
const BUSY_CPU: LoadReading = { cpu: 0.97, freeMem: 0.5 };
const LOW_MEMORY: LoadReading = { cpu: 0.2, freeMem: 0.01 };

describe('concurrency policy (pure)', () => {
  it('halves under CPU or memory pressure, down to 1', () => {
    expect(nextConcurrencyLimit(20, 20, BUSY_CPU, POLICY)).toBe(10);
    expect(nextConcurrencyLimit(10, 20, BUSY_CPU, POLICY)).toBe(5);
    expect(nextConcurrencyLimit(5, 20, LOW_MEMORY, POLICY)).toBe(2);
    expect(nextConcurrencyLimit(2, 20, LOW_MEMORY, POLICY)).toBe(1);
    expect(nextConcurrencyLimit(1, 20, BUSY_CPU, POLICY)).toBe(1);
    expect(nextConcurrencyLimit(1, 20, { cpu: 1, freeMem: 0 }, POLICY)).toBe(1);
  });

  it('grows by a tenth of concurrency (at least 1) back to the maximum, and never past it', () => {
    expect(nextConcurrencyLimit(1, 20, CALM, POLICY)).toBe(3);
    expect(nextConcurrencyLimit(3, 20, CALM, POLICY)).toBe(5);
    expect(nextConcurrencyLimit(19, 20, CALM, POLICY)).toBe(20);
    expect(nextConcurrencyLimit(20, 20, CALM, POLICY)).toBe(20);
    expect(nextConcurrencyLimit(1, 5, CALM, POLICY)).toBe(2); // ceil(0.5) = 1
    expect(nextConcurrencyLimit(10, 100, CALM, POLICY)).toBe(20);
    // From 1 back to 20 takes ten calm readings, not one.
    let limit = 1;
    const path: number[] = [];
    while (limit < 20) {
      limit = nextConcurrencyLimit(limit, 20, CALM, POLICY);
      path.push(limit);
    }
    expect(path).toEqual([3, 5, 7, 9, 11, 13, 15, 17, 19, 20]);
  });

  it('the thresholds are strict: exactly maxCpu or exactly minFreeMem is not pressure', () => {
    expect(nextConcurrencyLimit(4, 8, { cpu: 0.9, freeMem: 0.05 }, POLICY)).toBe(5);
    expect(nextConcurrencyLimit(4, 8, { cpu: 0.9001, freeMem: 0.5 }, POLICY)).toBe(2);
    expect(nextConcurrencyLimit(4, 8, { cpu: 0.2, freeMem: 0.0499 }, POLICY)).toBe(2);
  });

  it('the idle poll delay doubles up to the maximum and resets after a claim', () => {
    const delays: number[] = [];
    let delay = 50;
    for (let i = 0; i < 6; i++) {
      delay = nextPollDelayMs(delay, false, 50, 400);
      delays.push(delay);
    }
    expect(delays).toEqual([100, 200, 400, 400, 400, 400]);
    expect(nextPollDelayMs(400, true, 50, 400)).toBe(50);
    expect(nextPollDelayMs(100, true, 50, 400)).toBe(50);
    expect(nextPollDelayMs(10, false, 50, 400)).toBe(50); // never below the interval
  });
});

describe('load-aware worker', () => {
  it('under reported pressure runs at most its lowered limit at once (shown in the registry and as events), and ramps back up when the load recovers', async () => {
    const sluice = db.open();
    let reading: LoadReading = BUSY_CPU;
    const changes: SluiceEventMap['worker:concurrency'][] = [];
    sluice.events.on('worker:concurrency', (e) => changes.push(e));
    let active = 0;
    let peak = 0;
    const slow = defineJob<{ ms: number }>({
      name: 'slow',
      async handle({ ms }, ctx) {
        active++;
        peak = Math.max(peak, active);
        try {
          await sleep(ms, undefined, { signal: ctx.signal });
        } finally {
          active--;
        }
      },
    });
    const worker = sluice.worker({
      queues: ['load'],
      concurrency: 8,
      jobs: [slow],
      heartbeatIntervalMs: 100,
      lockTimeoutMs: 10_000,
      pollIntervalMs: 20,
      maxPollIntervalMs: 50,
      loadPolicy: { maxCpu: 0.9 }, // the CPU rule is opt-in (the default maxCpu is 1)
      loadSampler: async () => reading,
    });
    const limitInRegistry = async () =>
      Number(
        (
          await db.query<{ l: number }>('SELECT concurrency_limit AS l FROM sluice_workers WHERE id = ?', [worker.id])
        )[0]?.l,
      );
    await worker.start();
    try {
      expect(worker.concurrencyLimit).toBe(8);
      // Pressure: halved once per heartbeat down to 1, and no further.
      await waitFor(() => worker.concurrencyLimit === 1, { what: 'the limit down to 1' });
      expect(changes.map((c) => [c.from, c.to])).toEqual([
        [8, 4],
        [4, 2],
        [2, 1],
      ]);
      expect(changes[0]).toEqual({ workerId: worker.id, from: 8, to: 4, cpu: 0.97, freeMem: 0.5 });
      await waitFor(async () => (await limitInRegistry()) === 1, { what: 'concurrency_limit 1 in the registry' });

      // A backlog of 12 jobs runs one at a time while the pressure lasts.
      const busy = await sluice.enqueueBatch(
        Array.from({ length: 12 }, () => ({ name: 'slow', queue: 'load', payload: { ms: 30 } })),
      );
      await waitFor(async () => (await sluice.batches.get(busy.batchId as number))?.pending === 0, {
        what: 'the backlog done under pressure',
      });
      expect(peak).toBe(1);
      expect(worker.concurrencyLimit).toBe(1);
      expect(changes).toHaveLength(3);

      // Recovery: grows by ceil(8 / 10) = 1 per heartbeat back to 8.
      reading = CALM;
      await waitFor(() => worker.concurrencyLimit === 8, { what: 'the limit back to 8' });
      expect(changes.slice(3).map((c) => [c.from, c.to])).toEqual([
        [1, 2],
        [2, 3],
        [3, 4],
        [4, 5],
        [5, 6],
        [6, 7],
        [7, 8],
      ]);
      await waitFor(async () => (await limitInRegistry()) === 8, { what: 'concurrency_limit 8 in the registry' });

      // With room again, a backlog runs 8 at once: the limit, not anything else, held it to 1.
      peak = 0;
      const calm = await sluice.enqueueBatch(
        Array.from({ length: 16 }, () => ({ name: 'slow', queue: 'load', payload: { ms: 300 } })),
      );
      await waitFor(async () => (await sluice.batches.get(calm.batchId as number))?.pending === 0, {
        what: 'the backlog done with room',
      });
      expect(peak).toBe(8);
    } finally {
      await worker.stop();
    }
  });

  it('by default the CPU rule is off (maxCpu 1) and the memory rule is on: low free memory alone lowers the limit', async () => {
    const sluice = db.open();
    let reading: LoadReading = { cpu: 0.99, freeMem: 0.5 };
    const changes: SluiceEventMap['worker:concurrency'][] = [];
    sluice.events.on('worker:concurrency', (e) => changes.push(e));
    let heartbeats = 0;
    sluice.knex.on('query', (q: { sql: string }) => {
      if (/^\s*UPDATE `?sluice_workers`?\s/.test(q.sql)) heartbeats++;
    });
    const worker = sluice.worker({
      queues: ['load-mem'],
      concurrency: 6,
      jobs: [defineJob({ name: 'noop', handle: () => undefined })],
      heartbeatIntervalMs: 100,
      lockTimeoutMs: 10_000,
      pollIntervalMs: 50,
      loadSampler: async () => reading,
    });
    await worker.start();
    try {
      // A busy CPU through five heartbeats: no throttling.
      await waitFor(() => heartbeats >= 5, { what: 'five heartbeats' });
      expect(worker.concurrencyLimit).toBe(6);
      expect(changes).toEqual([]);
      reading = LOW_MEMORY;
      await waitFor(() => worker.concurrencyLimit === 1, { what: 'the limit down to 1 on low memory' });
      expect(changes.map((c) => [c.from, c.to])).toEqual([
        [6, 3],
        [3, 1],
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('an idle worker polls an empty queue less often as time goes on (pollIntervalMs 50 → maxPollIntervalMs 400)', async () => {
    const WINDOW_MS = 400;
    const sluice = db.open();
    // The claim's statements for this queue: the priority seek (MIN(priority)) and the head scan.
    const claimQueries: number[] = [];
    sluice.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => {
      if (/MIN\(priority\)|ORDER BY priority, run_at, id/.test(q.sql) && q.bindings?.[0] === 'idle')
        claimQueries.push(performance.now());
    });
    const worker = sluice.worker({
      queues: ['idle'],
      jobs: [defineJob({ name: 'noop', handle: () => undefined })],
      pollIntervalMs: 50,
      maxPollIntervalMs: 400,
      heartbeatIntervalMs: 1_000,
      loadSampler: async () => CALM,
    });
    await worker.start();
    try {
      // Observe until a statement arrives five windows after the first one.
      await waitFor(
        () => claimQueries.length > 0 && (claimQueries.at(-1) as number) - (claimQueries[0] as number) >= 5 * WINDOW_MS,
        {
          what: 'polls spanning five windows',
        },
      );
    } finally {
      await worker.stop();
    }
    const start = claimQueries[0] as number;
    const inWindow = (index: number) =>
      claimQueries.filter((t) => t >= start + index * WINDOW_MS && t < start + (index + 1) * WINDOW_MS).length;
    const early = inWindow(0);
    const late = inWindow(4);
    process.stdout.write(
      `[operations] idle claim statements: ${early} in the first ${WINDOW_MS} ms window, ${late} in the fifth\n`,
    );
    // Polls every 50 ms (±25 %) at first, doubling: at least 3 polls in the first window, each one
    // or two statements (a priority seek, and a second when the cached set was stale).
    expect(late).toBeLessThan(early);
    // At the 400 ms maximum (±25 %, so ≥ 300 ms apart) a window holds at most 2 polls; a fixed
    // 50 ms interval would make ~8.
    // (It still polls: the wait above needed statements past the fifth window's start.)
    expect(late).toBeLessThanOrEqual(4);
  });
});
