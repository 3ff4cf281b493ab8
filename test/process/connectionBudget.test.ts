import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnMaintenance, spawnSluice, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The connection budget of docs/operating.md, with real processes: a fleet of 10 `sluice work`
 * processes × concurrency 50 running at-least-once jobs that never touch the database, plus
 * `sluice maintenance` and `sluice dashboard` (its overview fetched throughout), drains a batch
 * while the test samples the server's PROCESSLIST for the fleet's own user (created for this
 * file: the test's own connections are root's). The fleet must fit a default max_connections of
 * 151 with room to spare.
 */
const db = useTestDatabase('connection_budget');
const USER = `sluice_budget_${randomBytes(3).toString('hex')}`;
const WORKERS = 10;
const CONCURRENCY = 50;
const JOBS = 1_000;
const QUEUE = 'budget';
/** MariaDB's default max_connections is 151: the fleet keeps well under it. */
const BUDGET = 100;
/** Idle: two per worker, a few more for maintenance and a settings read in progress. */
const SETTLED = 2 * WORKERS + 8;

let fleetUrl = '';

beforeAll(async () => {
  await db.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY ''`);
  await db.query(`GRANT ALL ON \`${db.name}\`.* TO '${USER}'@'%'`);
  const url = new URL(db.url);
  url.username = USER;
  url.password = '';
  fleetUrl = url.toString();
});

afterAll(async () => {
  await db.query(`DROP USER IF EXISTS '${USER}'@'%'`);
});

async function fleetConnections(): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?',
    [USER],
  );
  return Number(row?.n);
}

describe('connection budget', () => {
  it(`${WORKERS} workers × concurrency ${CONCURRENCY} (no-op jobs), maintenance and a dashboard drain ${JOBS} jobs within ${BUDGET} connections, then give back what they no longer use`, async () => {
    const workers = Array.from({ length: WORKERS }, () =>
      spawnWorker(fleetUrl, { queues: QUEUE, concurrency: CONCURRENCY, pollIntervalMs: 200 }, { logLevel: 'info' }),
    );
    const maintenance = spawnMaintenance(fleetUrl, {}, { logLevel: 'info' });
    const dashboard = spawnSluice('dashboard', ['--url', fleetUrl, '--port', '0', '--no-auth'], { logLevel: 'info' });
    const all = [...workers, maintenance, dashboard];
    await Promise.all(all.map((p) => p.ready));
    const listening = await dashboard.waitForLine((l) => l.event === 'dashboard:listening', 10_000);
    const page = `http://127.0.0.1:${listening.port}/`;

    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await fleetConnections());
        await sleep(20);
      }
    })();
    const browsing = (async () => {
      while (sampling) {
        const response = await fetch(page);
        expect(response.status).toBe(200);
        await response.arrayBuffer();
      }
    })();
    try {
      await db.sluice.enqueueBatch(Array.from({ length: JOBS }, () => ({ name: 'noop', queue: QUEUE, payload: {} })));
      await waitFor(async () => (await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs'))[0]?.n === 0, {
        what: 'the batch drained',
        timeoutMs: 120_000,
        intervalMs: 100,
      });
    } finally {
      sampling = false;
      await Promise.all([sampler, browsing]);
    }
    process.stderr.write(`connection budget: peak ${peak} connections for the fleet\n`);
    expect(peak, 'connections the fleet held at once').toBeGreaterThan(WORKERS);
    expect(peak, 'connections the fleet held at once').toBeLessThanOrEqual(BUDGET);

    // Drained and no longer browsed, the fleet gives back what it no longer uses: each idle worker
    // keeps its doorbell's sleep and one connection for its polls and heartbeats (a read of the
    // install's settings now and then borrows a third for a moment); the rest is closed.
    let settled = 0;
    await waitFor(
      async () => {
        settled = await fleetConnections();
        return settled <= SETTLED;
      },
      { what: `the idle fleet back to at most ${SETTLED} connections`, timeoutMs: 60_000, intervalMs: 250 },
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message} (last seen: ${settled})`);
    });
    process.stderr.write(`connection budget: the idle fleet settled at ${settled}\n`);

    const exits = await Promise.all(all.map((p) => p.stop()));
    for (const [i, exit] of exits.entries()) expect(exit, all[i]?.describe()).toEqual({ code: 0, signal: null });
  }, 240_000);
});
