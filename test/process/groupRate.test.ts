import { beforeAll, describe, expect, it } from 'vitest';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * docs/flow-control.md "Per-group rate limits": 8 real worker processes run one queue flat out
 * while two groups of it are limited to 20 starts per 2 s each (the queue's groupRate). The starts
 * are counted per window from the handlers' own timestamps (the `timed` fixture), never from what
 * sluice reports: each group holds its rate, and the groups do not hold each other back. Group a's
 * jobs are a backlog written before the fleet starts, due from three windows back (as after an
 * outage of the fleet): their spread at enqueue has passed, and only the count at claim keeps them
 * to the rate. Group b's are enqueued once the fleet is up.
 */
const db = useTestDatabase('process_group_rate');
const QUEUE = 'grouped';
const LIMIT = 20;
const INTERVAL_MS = 2_000;
/** Starts a window may hold past the limit: those claimed at the very end of the window before. */
const TOLERANCE = 2;
/**
 * The same in the first two windows, where processes run their first jobs: up to the whole count of
 * the window before (seen: 7 and 15 of its 20 carried into the next).
 */
const COLD = LIMIT;

beforeAll(() => createFixtureTables(db));

/** Starts per window (aligned to the clock the DB and the handlers share), in window order. */
function perWindow(starts: readonly number[]): [number, number][] {
  const counts = new Map<number, number>();
  for (const ms of starts) {
    const w = Math.floor(ms / INTERVAL_MS);
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => a[0] - b[0]);
}

describe('per-group rate limits across worker processes', () => {
  it(`two groups of ${LIMIT} per ${INTERVAL_MS} ms each hold with 8 worker processes flat out, a backlog too`, async () => {
    await db.sluice.queues.setLimits(QUEUE, { groupRate: { limit: LIMIT, intervalMs: INTERVAL_MS } });
    const backlogFrom = Date.now() - 3 * INTERVAL_MS;
    const a = await db.sluice.enqueueBatch(
      Array.from({ length: 200 }, () => ({
        name: 'timed',
        queue: QUEUE,
        group: 'a',
        runAt: new Date(backlogFrom),
        payload: { ms: 0 },
      })),
    );
    const fleet = Array.from({ length: 8 }, () =>
      spawnWorker(db.url, { queues: QUEUE, concurrency: 5, pollIntervalMs: 200 }, { logLevel: 'info' }),
    );
    await Promise.all(fleet.map((w) => w.ready));
    const first = Math.floor(Date.now() / INTERVAL_MS); // no job of b is due before its enqueue
    const b = await db.sluice.enqueueBatch(
      Array.from({ length: 100 }, () => ({ name: 'timed', queue: QUEUE, group: 'b', payload: { ms: 0 } })),
    );
    expect(a.count + b.count).toBe(300);
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'drained', timeoutMs: 90_000 });
    await Promise.all(fleet.map((w) => w.stop()));
    const spans = await db.query<{ job_id: number; pid: number; started_ms: number }>(
      'SELECT job_id, pid, started_ms FROM test_spans',
    );
    expect(spans).toHaveLength(300);
    expect(new Set(spans.map((s) => s.pid)).size).toBeGreaterThan(1);
    // Batch a's ids all come before batch b's (one transaction each, one after the other).
    const lastOfA = Math.max(
      ...(
        await db.query<{ id: number }>('SELECT MAX(job_id) AS id FROM sluice_job_history WHERE batch_id = ?', [
          a.batchId,
        ])
      ).map((r) => Number(r.id)),
    );
    for (const [group, total] of [
      ['a', 200],
      ['b', 100],
    ] as const) {
      const starts = spans
        .filter((s) => (group === 'a') === Number(s.job_id) <= lastOfA)
        .map((s) => Number(s.started_ms));
      expect(starts).toHaveLength(total);
      const windows = perWindow(starts);
      const counts = JSON.stringify(windows);
      // Each start is counted in the window of its claim (DB clock) and runs a moment later, never
      // before: through window w, at most the windows counted so far have started (b's from its
      // enqueue; a's from the window before its first start, whatever was due). A window holds the
      // limit plus the starts claimed at the very end of the window before; in the first two, a
      // process starting its first jobs can run a few of them later still.
      const firstStart = (windows[0] as [number, number])[0];
      const from = group === 'b' ? first : firstStart - 1;
      let started = 0;
      for (const [w, n] of windows) {
        started += n;
        expect(started, `${group} ${counts}`).toBeLessThanOrEqual((w - from + 1) * LIMIT);
        expect(n, `${group} ${counts}`).toBeLessThanOrEqual(LIMIT + (w < firstStart + 2 ? COLD : TOLERANCE));
      }
      expect(windows.length, counts).toBeGreaterThanOrEqual(total / LIMIT - 1);
      const full = windows.slice(1, -1).map(([, n]) => n);
      const mean = full.reduce((x, y) => x + y, 0) / Math.max(1, full.length);
      process.stdout.write(
        `group ${group}: ${windows.length} windows, max ${Math.max(...windows.map(([, n]) => n))}, mean ${mean.toFixed(1)} of ${LIMIT} per ${INTERVAL_MS} ms (full windows) ${counts}\n`,
      );
    }
  }, 180_000);
});
