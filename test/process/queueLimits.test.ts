import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { claimsReleased } from '../helpers/maintenanceLog.ts';
import { processState } from '../helpers/processState.ts';
import { type SluiceProcess, spawnMaintenance, spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/flow-control.md: a queue's cap and rate hold across real worker processes, observed from the
 * handlers' own timestamps (the `timed` fixture writes each run's start and finish by its process's
 * clock), never from what sluice reports. A SIGKILLed worker's slots come back when the maintenance
 * process releases its claims: the cap is counted from the jobs table, so nothing leaks.
 */
const db = useTestDatabase('process_queue_limits');
const QUEUE = 'limited';

beforeAll(() => createFixtureTables(db));

interface Span {
  pid: number;
  job_id: number;
  started_ms: number;
  finished_ms: number | null;
}

const spans = () => db.query<Span>('SELECT pid, job_id, started_ms, finished_ms FROM test_spans ORDER BY started_ms');

/** Pure: the most handlers running at once; a run that never finished ends at its process's death. */
function mostAtOnce(runs: readonly Span[], diedAt: ReadonlyMap<number, number>): number {
  const edges: [number, number][] = [];
  for (const r of runs) {
    const end = r.finished_ms ?? diedAt.get(r.pid);
    if (end === undefined) throw new Error(`job ${r.job_id} in ${r.pid} never finished, and its process did not die`);
    edges.push([Number(r.started_ms), 1], [Number(end), -1]);
  }
  // At the same instant an end comes before a start: the next job started as the last one ended.
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let most = 0;
  for (const [, step] of edges) {
    now += step;
    most = Math.max(most, now);
  }
  return most;
}

function workers(count: number, flags: { concurrency: number; lockTimeoutMs?: number }): SluiceProcess[] {
  return Array.from({ length: count }, () =>
    spawnWorker(
      db.url,
      { queues: QUEUE, pollIntervalMs: 200, heartbeatIntervalMs: 200, ...flags },
      { logLevel: 'info' },
    ),
  );
}

async function drained(timeoutMs: number): Promise<void> {
  await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the queue drained', timeoutMs });
}

describe('queue limits across worker processes', () => {
  it('a cap of 3 across 4 worker processes of concurrency 3 is never exceeded, and is reached', async () => {
    await db.sluice.queues.setLimits(QUEUE, { concurrency: 3 });
    const fleet = workers(4, { concurrency: 3 });
    await Promise.all(fleet.map((w) => w.ready));
    await db.sluice.enqueueBatch(
      Array.from({ length: 60 }, () => ({ name: 'timed', queue: QUEUE, payload: { ms: 100 } })),
    );
    await drained(60_000);
    await Promise.all(fleet.map((w) => w.stop()));
    const runs = await spans();
    expect(runs).toHaveLength(60);
    expect(new Set(runs.map((r) => r.pid)).size).toBeGreaterThan(1);
    expect(mostAtOnce(runs, new Map())).toBe(3);
  });

  it('under SIGKILLs of every worker, the cap holds and the dead workers’ slots come back', async () => {
    await db.sluice.queues.setLimits(QUEUE, { concurrency: 3 });
    const first = workers(4, { concurrency: 3, lockTimeoutMs: 2_000 });
    await Promise.all(first.map((w) => w.ready));
    await db.sluice.enqueueBatch(
      Array.from({ length: 40 }, () => ({ name: 'timed', queue: QUEUE, payload: { ms: 150 } })),
    );
    await waitFor(async () => (await spans()).length >= 6, { what: 'a few runs' });
    // Kill the whole fleet while it holds every slot of the cap. A running fleet frees a slot at
    // every completion and fills it a moment later, so a cap seen full is no cap full at the kill:
    // the fleet is frozen (SIGSTOP: it can claim, complete and heartbeat no more), the cap read
    // twice, a statement already sent given time to land in between, and only then killed;
    // thawed and tried again if a slot was free. No sweeper runs yet: nothing else moves a claim.
    const full = async () => (await db.sluice.queues.limits())[0]?.running === 3;
    await waitFor(
      async () => {
        for (const w of first) w.kill('SIGSTOP');
        await waitFor(() => first.every((w) => processState(w.pid) === 'T'), { what: 'the fleet frozen' });
        if ((await full()) && (await sleep(200).then(full))) return true;
        for (const w of first) w.kill('SIGCONT');
        return false;
      },
      { what: 'the fleet frozen holding the whole cap', intervalMs: 50 + Math.random() * 100 },
    );
    const diedAt = new Map<number, number>();
    for (const w of first) w.kill('SIGKILL');
    for (const w of first) {
      expect((await w.exited).signal).toBe('SIGKILL');
      diedAt.set(w.pid, Date.now());
    }
    // The dead claims hold the cap until the sweeper releases them; then the new fleet takes them.
    const sweeper = spawnMaintenance(
      db.url,
      { lockTimeoutMs: 2_000, jitterMs: 100, missedHeartbeats: 3 },
      { logLevel: 'info' },
    );
    const second = workers(2, { concurrency: 3, lockTimeoutMs: 2_000 });
    await Promise.all([sweeper.ready, ...second.map((w) => w.ready)]);
    await drained(60_000);
    // A pass logs its counts after its writes commit: the drain can come before the line does.
    const releasedSoFar = () =>
      sweeper.lines.filter((l) => l.event === 'maintenance:completed').reduce((sum, l) => sum + claimsReleased(l), 0);
    await sweeper.waitForLine(() => releasedSoFar() >= 3, 10_000, 'the passes that released the 3 dead claims');
    await Promise.all([...second, sweeper].map((w) => w.stop()));
    const runs = await spans();
    expect(new Set(runs.filter((r) => r.finished_ms !== null).map((r) => Number(r.job_id))).size).toBe(40);
    expect(runs.some((r) => second.some((w) => w.pid === r.pid))).toBe(true);
    expect(mostAtOnce(runs, diedAt)).toBeLessThanOrEqual(3);
    expect((await db.sluice.queues.limits())[0]).toMatchObject({ running: 0, blocked: null });
  });

  it('a rate of 15 per second with 8 worker processes flat out holds per window', async () => {
    const LIMIT = 15;
    await db.sluice.queues.setLimits(QUEUE, { rate: { limit: LIMIT, intervalMs: 1_000 } });
    const fleet = workers(8, { concurrency: 5 });
    await Promise.all(fleet.map((w) => w.ready));
    const first = Math.floor(Date.now() / 1_000); // no claim comes before the enqueue
    await db.sluice.enqueueBatch(
      Array.from({ length: 150 }, () => ({ name: 'timed', queue: QUEUE, payload: { ms: 0 } })),
    );
    await drained(60_000);
    await Promise.all(fleet.map((w) => w.stop()));
    const runs = await spans();
    expect(runs).toHaveLength(150);
    const perWindow = new Map<number, number>();
    for (const r of runs) {
      const window = Math.floor(Number(r.started_ms) / 1_000);
      perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
    }
    // Windows are aligned to the clock the DB and the handlers share. A start lags its claim by a
    // few ms, and by up to a few hundred in a process's first jobs on a busy host: a job claimed in
    // a window's last moments may start in the next one. Lag only ever delays a start, so by the
    // end of the n-th window since the enqueue at most n windows' worth have started; and once the
    // processes are warm (from the third window on) each window holds its limit, within a start or two.
    const sorted = [...perWindow].sort((a, b) => a[0] - b[0]);
    const counts = JSON.stringify(sorted);
    let started = 0;
    for (const [window, n] of sorted) {
      started += n;
      expect(started, counts).toBeLessThanOrEqual((window - first + 1) * LIMIT);
      if (window >= first + 2) expect(n, counts).toBeLessThanOrEqual(LIMIT + 2);
    }
    expect(perWindow.size).toBeGreaterThanOrEqual(150 / LIMIT - 1);
    expect(new Set(runs.map((r) => r.pid)).size).toBeGreaterThan(1);
  });
});
