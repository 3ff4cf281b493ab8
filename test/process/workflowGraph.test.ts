import { beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/index.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A workflow of 5,001 jobs drained by worker processes: 50 groups of a root, 98 middle jobs
 * (every tenth also waits for the next group's root: jobs with two parents, finishing at once)
 * and a fan-in of the 98, then one final job after the 50 fan-ins. Each job is `graphStep`
 * (exactly-once): its effect row commits with its completion, and at its start it counts its
 * parents' committed rows. So every job ran exactly once (one row per n) and never before all its
 * parents committed (parents_seen = parents on every row), checked from the handlers' own rows —
 * also while workers are SIGKILLed and replaced, and the maintenance process is killed mid-way.
 */
const db = useTestDatabase('process_workflow');
const QUEUE = 'graph';
const GROUPS = 50;
const PER_GROUP = 100;
const TOTAL = GROUPS * PER_GROUP + 1;

beforeAll(() => createFixtureTables(db));

function graph(): JobSpec[] {
  const jobs: JobSpec[] = [];
  const step = (n: number, parents: number[]): JobSpec => ({
    name: 'graphStep',
    queue: QUEUE,
    ref: `n${n}`,
    parents: parents.map((p) => `n${p}`),
    payload: { n, parents },
  });
  const root = (g: number) => g * PER_GROUP;
  for (let g = 0; g < GROUPS; g++) {
    jobs.push(step(root(g), []));
    const middles: number[] = [];
    for (let m = 1; m < PER_GROUP - 1; m++) {
      const n = root(g) + m;
      middles.push(n);
      jobs.push(step(n, m % 10 === 0 ? [root(g), root((g + 1) % GROUPS)] : [root(g)]));
    }
    jobs.push(step(root(g) + PER_GROUP - 1, middles));
  }
  jobs.push(
    step(
      GROUPS * PER_GROUP,
      Array.from({ length: GROUPS }, (_, g) => root(g) + PER_GROUP - 1),
    ),
  );
  return jobs;
}

async function count(sql: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql);
  return Number(row?.n);
}

function worker(): SluiceProcess {
  return spawnWorker(
    db.url,
    { queues: QUEUE, concurrency: 24, pollIntervalMs: 200, heartbeatIntervalMs: 400, lockTimeoutMs: 60_000 },
    { logLevel: 'info' },
  );
}

function maintenance(): SluiceProcess {
  return spawnMaintenance(db.url, { lockTimeoutMs: 60_000, jitterMs: 50, missedHeartbeats: 5 }, { logLevel: 'info' });
}

async function expectEveryJobOnceAfterItsParents(): Promise<void> {
  const [proof] = await db.query<{ runs: number; jobs: number; early: number }>(
    'SELECT COUNT(*) AS runs, COUNT(DISTINCT n) AS jobs, SUM(parents_seen <> parents) AS early FROM test_graph',
  );
  expect({ runs: Number(proof?.runs), jobs: Number(proof?.jobs), early: Number(proof?.early) }).toEqual({
    runs: TOTAL,
    jobs: TOTAL,
    early: 0,
  });
  for (const table of ['sluice_jobs', 'sluice_job_edges', 'sluice_job_holds', 'sluice_dead_jobs'])
    expect(await count(`SELECT COUNT(*) AS n FROM ${table}`), table).toBe(0);
}

describe('a 5,001-job workflow drained by worker processes', () => {
  it('runs every job exactly once, never before all its parents committed', async () => {
    await db.sluice.enqueueBatch(graph());
    const workers = [worker(), worker(), worker()];
    await Promise.all(workers.map((w) => w.ready));
    // No maintenance process here: a job that only a sweep could free would stop the drain.
    await waitFor(async () => (await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0, {
      what: 'the workflow drained',
      timeoutMs: 540_000,
      intervalMs: 250,
    }).catch(async (error: Error) => {
      const left = await db.query(
        `SELECT IF(run_at = '9999-12-31 23:59:59.000', 'held', IF(lock_id = '', 'free', 'claimed')) AS state, COUNT(*) AS n
         FROM sluice_jobs GROUP BY state`,
      );
      throw new Error(`${error.message}; left: ${JSON.stringify(left)}`);
    });
    for (const exit of await Promise.all(workers.map((w) => w.stop()))) expect(exit).toEqual({ code: 0, signal: null });
    await expectEveryJobOnceAfterItsParents();
  }, 600_000);

  it('does the same while workers are SIGKILLed and replaced and the maintenance process is killed mid-way', async () => {
    await db.sluice.enqueueBatch(graph());
    const workers = [worker(), worker(), worker()];
    let sweeper = maintenance();
    await Promise.all([...workers.map((w) => w.ready), sweeper.ready]);
    let kills = 0;
    let sweeperKilled = false;
    for (let done = 0; done < TOTAL; ) {
      const next = Math.min(TOTAL, done + 800);
      done = await waitFor(
        async () => {
          const n = await count('SELECT COUNT(*) AS n FROM test_graph');
          return n >= next || (await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0 ? Math.max(n, 1) : 0;
        },
        { what: `${next} jobs run`, timeoutMs: 120_000, intervalMs: 100 },
      );
      if ((await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0) break;
      const victim = Math.floor(Math.random() * workers.length);
      workers[victim]?.kill('SIGKILL');
      await workers[victim]?.exited;
      kills++;
      workers[victim] = worker();
      if (!sweeperKilled && done >= TOTAL / 2) {
        sweeper.kill('SIGKILL');
        await sweeper.exited;
        sweeperKilled = true;
        sweeper = maintenance();
      }
    }
    await waitFor(async () => (await count('SELECT COUNT(*) AS n FROM sluice_jobs')) === 0, {
      what: 'the workflow drained',
      timeoutMs: 240_000,
      intervalMs: 250,
    });
    await Promise.all([...workers.map((w) => w.stop()), sweeper.stop()]);
    expect(kills).toBeGreaterThan(3);
    expect(sweeperKilled).toBe(true);
    await expectEveryJobOnceAfterItsParents();
  }, 400_000);
});
