import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents } from '../helpers/workerHarness.ts';

const db = useTestDatabase('lookahead');

const SLOTS = 4;
const FAST = 400;
const GATED = 100;

/**
 * Fast jobs first (priority 0), so the slots finish many jobs per claim round trip and the worker
 * claims ahead of them; then jobs that block their slot until the test opens the gate (priority 1).
 */
async function setup() {
  const sluice = db.open();
  const events = recordEvents(sluice);
  const gate = deferred();
  /** Resolved by the handler that fills the last slot. */
  const full = deferred();
  const started: number[] = [];
  const fast = defineJob({ name: 'fast', handle: () => undefined });
  const gated = defineJob<{ n: number }>({
    name: 'gated',
    handle: async (payload) => {
      started.push(payload.n);
      if (started.length === SLOTS) full.resolve();
      await gate.promise;
    },
  });
  await sluice.enqueueBatch([
    ...Array.from({ length: FAST }, (_, n) => ({ name: 'fast', payload: { n }, queue: 'work', priority: 0 })),
    ...Array.from({ length: GATED }, (_, n) => ({ name: 'gated', payload: { n }, queue: 'work', priority: 1 })),
  ]);
  const worker = sluice.worker({
    queues: ['work'],
    concurrency: SLOTS,
    jobs: [fast, gated],
    pollIntervalMs: 20,
    maxPollIntervalMs: 200,
    shutdownTimeoutMs: 120_000,
    loadPolicy: { enabled: false },
  });
  return { sluice, events, gate, full, started, worker };
}

const claimed = () => countRows(db, 'sluice_jobs', "lock_id <> ''");

describe('claiming ahead of the slots', () => {
  it('holds more jobs than slots while fast jobs drain, and starts no more than the slots', async () => {
    const { events, gate, full, started, worker } = await setup();
    await worker.start();
    try {
      await full.promise;
      // Jobs claimed ahead wait for a slot: fenced claims like the running ones, counted as held.
      expect(await claimed()).toBeGreaterThan(SLOTS);
      expect(worker.inFlight).toBe(SLOTS);
      expect(started.length).toBe(SLOTS);
      gate.resolve();
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue to drain' });
    } finally {
      gate.resolve();
      await worker.stop();
    }
    expect(new Set(events['job:completed'].map((e) => e.jobId)).size).toBe(FAST + GATED);
    expect(events['job:completed'].length).toBe(FAST + GATED);
    expect(events['worker:error']).toEqual([]);
  });

  it('a stop releases the jobs claimed ahead at once, while running jobs keep their claims', async () => {
    const { events, gate, full, started, worker } = await setup();
    await worker.start();
    // Stopped the moment the last slot fills: long before a job claimed ahead could be given back
    // for waiting too long (the claim loop ends with the stop, and with it that check).
    await full.promise;
    const stopped = worker.stop();
    // Long before the shutdown deadline, with the running handlers still blocked.
    await waitFor(async () => (await claimed()) === SLOTS, { what: 'only the running jobs still claimed' });
    expect(started.length).toBe(SLOTS);
    const free = await db.query<{ retry_times: number; locked: number }>(
      "SELECT retry_times, locked_at > '1970-01-02' AS locked FROM sluice_jobs WHERE lock_id = ''",
    );
    expect(free.length).toBe(GATED - SLOTS);
    // Given back uncounted: the jobs never started.
    expect(free.every((r) => Number(r.retry_times) === 0 && Number(r.locked) === 0)).toBe(true);
    gate.resolve();
    await stopped;
    expect(await countRows(db, 'sluice_jobs')).toBe(GATED - SLOTS);
    expect(events['job:completed'].length).toBe(FAST + SLOTS);
    // Released by the stop itself: the jobs claimed ahead (the running ones finished in time).
    expect(events['worker:stopped'][0]?.released).toBeGreaterThan(0);
    expect(events['worker:error']).toEqual([]);
  });

  it('jobs claimed ahead go back to the queue when the slots stall on slow jobs', async () => {
    const { events, gate, full, started, worker } = await setup();
    await worker.start();
    try {
      await full.promise;
      expect(await claimed()).toBeGreaterThan(SLOTS);
      // The slots finish nothing now: the drain rate falls, and what waited too long is given back.
      await waitFor(async () => (await claimed()) === SLOTS, { what: 'the jobs claimed ahead given back' });
      expect(started.length).toBe(SLOTS);
      const [counted] = await db.query<{ n: number }>(
        "SELECT COUNT(*) AS n FROM sluice_jobs WHERE lock_id = '' AND retry_times > 0",
      );
      expect(Number(counted?.n)).toBe(0);
      gate.resolve();
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue to drain' });
    } finally {
      gate.resolve();
      await worker.stop();
    }
    expect(new Set(events['job:completed'].map((e) => e.jobId)).size).toBe(FAST + GATED);
    expect(events['job:completed'].length).toBe(FAST + GATED);
    expect(events['worker:error']).toEqual([]);
  });
});
