import { describe, expect, it } from 'vitest';
import { errorShape } from '../../src/deadJobs/failureGroups.ts';
import { OptionsError } from '../../src/index.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Failures grouped by queue, job name and error shape (sluice.deadJobs.groups, the dashboard's
 * /failures): what is failing and how often, from one statement of `limit` rows; re-driven dead
 * jobs left out; the newest first within a group; text from the database escaped.
 */
const db = useTestDatabase('failure_groups');
const dashboard = useDashboard(() => db.sluice, { auth: false });

let nextId = 1;

/** Inserts a dead job of `queue` / `name` that died `agoS` seconds ago of `error` (its last_error). */
async function dead(queue: string, name: string, error: string, agoS: number, redriven = false): Promise<void> {
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at, redriven_at)
     VALUES (?, ?, ?, '{}', 0, 3, 3, ?, NOW(3) - INTERVAL ? SECOND, NOW(3) - INTERVAL ? SECOND, IF(?, NOW(3), NULL))`,
    [nextId++, queue, name, error, agoS + 60, agoS, redriven],
  );
}

describe('failures grouped', () => {
  it('shapes an error line: ids, numbers, hex and quoted values replaced', () => {
    expect(errorShape('Error: order 1812 not found')).toBe('Error: order <n> not found');
    expect(errorShape("[ECONNRESET] Error: read ECONNRESET at 10.0.0.7:5432 for 'billing'")).toBe(
      '[ECONNRESET] Error: read ECONNRESET at <n> for <str>',
    );
    expect(errorShape('Error: user 3f2a9c1e-7b1d-4c2e-9f00-0123456789ab gone, trace 9f86d081884c7d65')).toBe(
      'Error: user <uuid> gone, trace <hex>',
    );
  });

  it('groups the newest dead jobs, most first, leaving re-driven ones out', async () => {
    for (let i = 0; i < 5; i++) await dead('billing', 'charge', `Error: order ${1000 + i} not found\n    at x`, 10 + i);
    await dead('billing', 'charge', 'Error: order 1 not found', 5, true);
    for (let i = 0; i < 2; i++)
      await dead('mail', 'send', `[ETIMEDOUT] Error: connect to "smtp-${i}" timed out`, 20 + i);
    await dead('mail', 'send', '<script>alert(1)</script>', 30);
    const { groups, read, capped } = await db.sluice.deadJobs.groups();
    expect({ read, capped }).toEqual({ read: 8, capped: false });
    expect(groups.map((g) => [g.queue, g.name, g.shape, g.count])).toEqual([
      ['billing', 'charge', 'Error: order <n> not found', 5],
      ['mail', 'send', '[ETIMEDOUT] Error: connect to <str> timed out', 2],
      ['mail', 'send', '<script>alert(<n>)</script>', 1],
    ]);
    const [billing] = groups;
    expect(billing?.example).toBe('Error: order 1000 not found');
    expect(billing?.newestAgoMs).toBeLessThan(billing?.oldestAgoMs ?? 0);

    // A limit reads that many of the newest, and says the read stopped there.
    const newest = await db.sluice.deadJobs.groups({ limit: 3 });
    expect(newest.capped).toBe(true);
    expect(newest.groups.map((g) => g.count)).toEqual([2]);
    await expect(db.sluice.deadJobs.groups({ limit: 0 })).rejects.toThrow(OptionsError);

    const page = await (await fetch(`${dashboard.url}/failures`)).text();
    expect(page).toContain('data-failure-count="5"');
    expect(page).toContain('Error: order &lt;n&gt; not found');
    expect(page).toContain('href="/dead?queue=billing&amp;name=charge"');
    expect(page).not.toContain('<script>alert');
  });
});
