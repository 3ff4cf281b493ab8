import { describe, expect, it } from 'vitest';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The overview says when a queue's own cap holds its due jobs back, instead of "ok": a queue at
 * its cap with jobs ready is "at its cap (1 of 1 running)"; a queue under its cap stays "ok".
 */
const db = useTestDatabase('overview_limited');
const dashboard = useDashboard(() => db.sluice, { auth: false });

const rowOf = (page: string, queue: string) =>
  new RegExp(`<tr data-queue="${queue}"[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';

describe('the overview and queue limits', () => {
  it('shows a capped queue as capped, not ok', async () => {
    await db.sluice.queues.setLimits('capped', { concurrency: 1 });
    await db.sluice.queues.setLimits('roomy', { concurrency: 5 });
    for (const queue of ['capped', 'roomy']) {
      await insertJob(db, { queue, lockId: `h-1~t.${queue}` });
      await insertJob(db, { queue });
    }
    const page = await (await fetch(`${dashboard.url}/`)).text();
    const capped = rowOf(page, 'capped');
    expect(capped).toContain('data-limited="capped"');
    expect(capped).toContain('at its cap (1 of 1 running)');
    expect(capped).not.toMatch(/<td>ok<\/td>/);
    expect(rowOf(page, 'roomy')).not.toContain('data-limited');
  });
});
