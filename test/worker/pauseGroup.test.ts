import { describe, expect, it } from 'vitest';
import { defineJob, RateLimitedError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * docs/flow-control.md "Pausing a group": a handler's `RateLimitedError(ms, { pause: 'group' })`
 * snoozes its job without counting an attempt and moves the rest of its group's waiting jobs past
 * the pause; other groups of the queue go on, and a job of the group enqueued during the pause
 * waits for its end too.
 */
const db = useTestDatabase('pause_group');

/** ms from the DB's now to each waiting job's run_at, for one group. */
const waits = async (group: string) =>
  (
    await db.query<{ ms: number }>(
      "SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), run_at) DIV 1000 AS ms FROM sluice_jobs WHERE group_key = ? AND lock_id = ''",
      [group],
    )
  ).map((r) => Number(r.ms));

describe('pausing a group', () => {
  it("moves the group's waiting jobs past the pause; other groups run on", async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ran: string[] = [];
    let limited = false;
    const job = defineJob<{ tag: string }>({
      name: 'call',
      maxRetries: 0,
      handle: (payload) => {
        if (payload.tag === 'acme-0' && !limited) {
          limited = true;
          throw new RateLimitedError(60_000, { pause: 'group' });
        }
        ran.push(payload.tag);
      },
    });
    await sluice.enqueue({ name: 'call', queue: 'api', group: 'acme', payload: { tag: 'acme-0' } });
    await withWorker(sluice, [job], { queues: ['api'], concurrency: 1, pollIntervalMs: 50 }, async () => {
      await waitFor(() => events['job:snoozed'].length === 1, { what: 'the 429' });
      // Enqueued after the pause: acme's jobs reserve past it, other's run now.
      await sluice.enqueueBatch([
        ...Array.from({ length: 4 }, (_, i) => ({
          name: 'call',
          queue: 'api',
          group: 'acme',
          payload: { tag: `acme-${i + 1}` },
        })),
        ...Array.from({ length: 3 }, (_, i) => ({
          name: 'call',
          queue: 'api',
          group: 'other',
          payload: { tag: `other-${i}` },
        })),
      ]);
      await waitFor(() => ran.length === 3, { what: "the other group's jobs" });
      expect(ran.every((t) => t.startsWith('other-'))).toBe(true);
    });
    const acme = await waits('acme');
    expect(acme).toHaveLength(5);
    for (const ms of acme) expect(ms).toBeGreaterThan(50_000);
    expect(events['job:snoozed'][0]).toMatchObject({ delayMs: 60_000, pausedQueue: false });
    expect(events['job:failed']).toEqual([]);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    await sluice.close();
  });

  it('moves jobs that were already waiting, by whole intervals for a rated group so its rate still holds', async () => {
    const sluice = db.open();
    const rate = { limit: 2, intervalMs: 10_000 };
    const waiting = await sluice.enqueueBatch(
      Array.from({ length: 6 }, (_, i) => ({
        name: 'call',
        queue: 'api2',
        group: 'acme',
        groupLimits: { rate },
        delayMs: 20_000, // not due while the worker runs: only the job that hits the wall starts
        payload: { tag: `w${i}` },
      })),
    );
    expect(waiting.count).toBe(6);
    const before = (await waits('acme')).sort((a, b) => a - b);
    // The handler of one more of the group's jobs hits the wall (it is due now: its own window).
    await sluice.enqueue({ name: 'call', queue: 'api2', group: 'acme2', payload: { tag: 'x' } });
    await db.query(
      "UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 SECOND, group_key = 'acme' WHERE group_key = 'acme2'",
    );
    const job = defineJob<{ tag: string }>({
      name: 'call',
      handle: (payload) => {
        if (payload.tag === 'x') throw new RateLimitedError(25_000, { pause: 'group' });
      },
    });
    const events = recordEvents(sluice);
    // Only the due job can start: the others wait in their windows.
    await withWorker(sluice, [job], { queues: ['api2'], concurrency: 1, pollIntervalMs: 50 }, async () => {
      await waitFor(() => events['job:snoozed'].length === 1, { what: 'the 429' });
    });
    const after = (await waits('acme')).sort((a, b) => a - b);
    expect(after).toHaveLength(7);
    // Each waiting job moved by 30 s (25 s rounded up to whole 10 s intervals), give or take the
    // time between the two reads; the snoozed one waits 25 s.
    const moved = after.filter((ms) => ms > 26_000);
    expect(moved).toHaveLength(6);
    moved.forEach((ms, i) => {
      const shift = ms - (before[i] as number);
      expect(shift).toBeGreaterThan(25_000);
      expect(shift).toBeLessThanOrEqual(30_000);
    });
    await sluice.close();
  });
});
