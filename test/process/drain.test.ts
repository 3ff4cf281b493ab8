import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Four `sluice work` processes compete for one queue of 20,000 jobs (one all-or-nothing batch),
 * once per claim strategy. Every job must be handled exactly once: the `record` job writes one
 * row per run, so a double claim shows as a duplicate job id and a lost job as a missing one.
 * Heartbeats (every ~10 s, the default) race the batched completions; with no sweeper running
 * no claim can be lost, so any warning (claim:lost included) fails the test.
 */
const db = useTestDatabase('process_drain');
const JOBS = 20_000;
const WORKERS = 4;
const QUEUE = 'drain';

interface Proof {
  runs: number;
  jobs: number;
  numbers: number;
  pids: number;
}

beforeAll(() => createFixtureTables(db));

async function count(sql: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql);
  return Number(row?.n);
}

describe('drain with worker processes', () => {
  for (const claim of ['random-head', 'skip-locked'] as const) {
    it(`${WORKERS} processes drain ${JOBS.toLocaleString('en')} jobs with ${claim}: each handled exactly once, all exit 0 on SIGINT`, async () => {
      // info level: the per-job debug lines would cost this 2-core host more than the jobs do.
      const workers = Array.from({ length: WORKERS }, () =>
        spawnWorker(db.url, { queues: QUEUE, claim, concurrency: 10, pollIntervalMs: 200 }, { logLevel: 'info' }),
      );
      // Enqueued once every process is ready: each one's share then measures its claims, not how
      // much sooner than the others it started (on a loaded host, seconds apart).
      await Promise.all(workers.map((w) => w.ready));
      await db.sluice.enqueueBatch(
        Array.from({ length: JOBS }, (_, n) => ({ name: 'record', queue: QUEUE, payload: { n } })),
      );

      await waitFor(async () => (await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0, {
        what: 'the queue drained',
        timeoutMs: 240_000,
        intervalMs: 250,
      });
      const exits = await Promise.all(workers.map((w) => w.stop()));
      for (const [i, exit] of exits.entries()) expect(exit, workers[i]?.describe()).toEqual({ code: 0, signal: null });

      const [proof] = await db.query<Proof>(
        'SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id) AS jobs, COUNT(DISTINCT n) AS numbers, COUNT(DISTINCT pid) AS pids FROM test_effects',
      );
      expect(proof).toEqual({ runs: JOBS, jobs: JOBS, numbers: JOBS, pids: expect.any(Number) });
      expect(proof?.pids).toBeGreaterThan(1);
      const pids = (await db.query<{ pid: number }>('SELECT DISTINCT pid FROM test_effects')).map((r) => r.pid);
      expect(workers.map((w) => w.pid)).toEqual(expect.arrayContaining(pids));
      expect(await count('SELECT COUNT(*) AS n FROM sluice_jobs')).toBe(0);
      expect(await count('SELECT COUNT(*) AS n FROM sluice_dead_jobs')).toBe(0);

      // Each process says what it did: the counts add up to the batch, with no lost claim, failure or error.
      const stopped = workers.map((w) => w.events('worker:stopped'));
      expect(stopped.map((s) => s.length)).toEqual(workers.map(() => 1));
      expect(stopped.reduce((sum, [s]) => sum + (s?.processed as number), 0)).toBe(JOBS);
      expect(stopped.every(([s]) => s?.released === 0)).toBe(true);
      // Claiming ahead of the slots must not let one process hoard the queue: each does a fair part.
      const shares = stopped.map(([s]) => s?.processed as number);
      expect(Math.min(...shares), `jobs per process: ${shares.join(', ')}`).toBeGreaterThan(JOBS / WORKERS / 4);
      for (const w of workers) {
        expect(
          w.lines.filter((l) => l.level >= 40),
          w.describe(),
        ).toEqual([]);
      }
    }, 300_000);
  }
});
