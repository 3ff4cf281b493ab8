import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * `sluice.history.timings`: one queue's jobs per bucket by job name, and p50/p95 run time and wait
 * per bucket of its completed jobs (or one name's), from one bounded read of the history; other
 * queues' jobs and cancelled ones are left out of the quantiles; a capped read says so.
 */
const db = useTestDatabase('timings_per_interval');

interface Entry {
  queue: string;
  name: string;
  /** When it finished, seconds ago. */
  ago: number;
  runMs: number;
  waitMs: number;
  outcome?: 'completed' | 'cancelled';
}

let nextId = 1;
async function history(entries: Entry[]): Promise<void> {
  for (const e of entries)
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, outcome, finished_at, started_at, created_at)
       SELECT ?, ?, ?, '{}', 0, ?, f, f - INTERVAL ? MICROSECOND, f - INTERVAL ? MICROSECOND
       FROM (SELECT NOW(3) - INTERVAL ? SECOND AS f) t`,
      [nextId++, e.queue, e.name, e.outcome ?? 'completed', e.runMs * 1000, (e.runMs + e.waitMs) * 1000, e.ago],
    );
}

const times = (n: number, entry: Entry): Entry[] => Array.from({ length: n }, () => entry);

describe('history.timings', () => {
  it("gives one queue's jobs by name and its run and wait quantiles per bucket, within 9 %", async () => {
    await history([
      // The minute before last: 20 welcomes of 100 ms, waiting 2 s; one slow one.
      ...times(19, { queue: 'mail', name: 'welcome', ago: 90, runMs: 100, waitMs: 2_000 }),
      { queue: 'mail', name: 'welcome', ago: 90, runMs: 5_000, waitMs: 2_000 },
      // The last minute: 10 digests of 1 s, waiting 50 ms; a cancelled one and another queue's, left out.
      ...times(10, { queue: 'mail', name: 'digest', ago: 10, runMs: 1_000, waitMs: 50 }),
      { queue: 'mail', name: 'digest', ago: 10, runMs: 60_000, waitMs: 60_000, outcome: 'cancelled' },
      ...times(5, { queue: 'images', name: 'thumbnail', ago: 10, runMs: 90_000, waitMs: 90_000 }),
    ]);
    // Two of mail's jobs died in the last minute (one of images', left out).
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (900, 'mail', 'digest', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 5 SECOND),
              (901, 'mail', 'digest', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 6 SECOND),
              (902, 'images', 'thumbnail', '{}', 0, 3, 'x', NOW(3), NOW(3) - INTERVAL 5 SECOND)`,
    );
    const t = await db.sluice.history.timings({ queue: 'mail', bucketSeconds: 60, buckets: 3 });
    expect(t.capped).toBe(false);
    expect(t.finished).toEqual([0, 20, 11]);
    expect(t.died).toEqual([0, 0, 2]);
    expect(t.byName).toEqual([
      { name: 'welcome', finished: [0, 20, 0] },
      { name: 'digest', finished: [0, 0, 11] },
    ]);
    const near = (value: number | null | undefined, exact: number) => {
      expect(value).not.toBeNull();
      expect(Math.abs((value as number) / exact - 1)).toBeLessThanOrEqual(0.09);
    };
    expect(t.runMs.p50[0]).toBeNull();
    near(t.runMs.p50[1], 100);
    near(t.runMs.p95[1], 100);
    near(t.waitMs.p50[1], 2_000);
    near(t.runMs.p50[2], 1_000);
    near(t.waitMs.p95[2], 50);
    // p95 of 20: the 19th — still a 100 ms one; of 19 fast and 2 slow it would be the slow one.
    await history([{ queue: 'mail', name: 'welcome', ago: 90, runMs: 5_000, waitMs: 2_000 }]);
    near((await db.sluice.history.timings({ queue: 'mail', bucketSeconds: 60, buckets: 3 })).runMs.p95[1], 5_000);

    // One name's quantiles; the names' series stay whole.
    const digest = await db.sluice.history.timings({ queue: 'mail', name: 'digest', bucketSeconds: 60, buckets: 3 });
    expect(digest.runMs.p50[1]).toBeNull();
    near(digest.runMs.p50[2], 1_000);
    expect(digest.byName.map((n) => n.name)).toEqual(['welcome', 'digest']);

    // The names past `names` summed as one series.
    const top = await db.sluice.history.timings({ queue: 'mail', names: 1, bucketSeconds: 60, buckets: 3 });
    expect(top.byName).toEqual([
      { name: 'welcome', finished: [0, 21, 0] },
      { name: null, finished: [0, 0, 11] },
    ]);

    // A name that cannot be a job's is refused at the call.
    await expect(db.sluice.history.timings({ queue: 'mail', name: 'no such<name>' })).rejects.toThrow(
      /option name must be a job name/,
    );
    // Capped: only the newest entries of every queue are read.
    const capped = await db.sluice.history.timings({ queue: 'mail', maxRows: 16, bucketSeconds: 60, buckets: 3 });
    expect(capped.capped).toBe(true);
    expect(capped.byName).toEqual([{ name: 'digest', finished: [0, 0, 11] }]);
  });
});
