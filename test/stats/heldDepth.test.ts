import { describe, expect, it } from 'vitest';
import { SluiceMetrics } from '../../src/index.ts';
import { useDashboard } from '../helpers/dashboardServer.ts';
import { ago, insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Held jobs (run_at = HELD_RUN_AT: a workflow's children waiting for their parents) are counted
 * apart everywhere a queue's depth shows — queues.depth(), the maintenance pass's recorded depth,
 * the metrics, the dashboard's overview and queue page — and never as ready, delayed or late: a
 * queue whose only waiting jobs are held keeps a latency promise of 1 ms.
 */
const db = useTestDatabase('held_depth');
const dashboard = useDashboard(() => db.sluice, { auth: false });

/** A root delayed by an hour and `children` held behind it, on queue `queue`. */
async function heldGraph(queue: string, children: number): Promise<void> {
  await db.sluice.enqueueBatch([
    { name: 'root', queue, ref: 'root', delayMs: 3_600_000 },
    ...Array.from({ length: children }, (_, i) => ({ name: 'child', queue, parents: ['root'], payload: { i } })),
  ]);
}

describe('held jobs in the queue depth', () => {
  it('are counted as held, not ready or delayed, by depth(), the recorded depth, the metrics and the dashboard', async () => {
    await heldGraph('graph', 3);
    await insertJob(db, { queue: 'graph', runAt: ago(5_000) }); // one ready, 5 s old
    const [depth] = await db.sluice.queues.depth({ queue: 'graph' });
    expect(depth).toMatchObject({
      ready: { count: 1, exact: true },
      notDue: { count: 1, exact: true },
      held: { count: 3, exact: true },
      running: { count: 0, exact: true },
    });
    expect(depth?.oldestReadyMs).toBeGreaterThanOrEqual(4_000);

    await db.sluice.maintenance({ jitterMs: 0 }).runOnce();
    const [recorded] = await db.sluice.queues.recordedDepth();
    expect(recorded).toMatchObject({
      queue: 'graph',
      ready: { count: 1 },
      notDue: { count: 1 },
      held: { count: 3, exact: true },
    });

    const text = await new SluiceMetrics(db.sluice, 0).render();
    expect(text).toContain('sluice_jobs{queue="graph",state="held"} 3');
    expect(text).toContain('sluice_jobs{queue="graph",state="delayed"} 1');
    expect(text).toContain('sluice_jobs{queue="graph",state="ready"} 1');

    const overview = await (await fetch(`${dashboard.url}/`)).text();
    expect(overview).toMatch(/<tr data-queue="graph"[\s\S]*?<td class="num" data-count="held">3<\/td>/);
    const page = await (await fetch(`${dashboard.url}/queues/graph`)).text();
    expect(page).toContain('3 held');
  });

  it('a queue whose only waiting jobs are held keeps a 1 ms start promise and a max-ready of 1', async () => {
    await db.sluice.queues.setPromise('promised', { startWithinMs: 1, maxReady: 1 });
    await heldGraph('promised', 5);
    await db.query("UPDATE sluice_jobs SET created_at = NOW(3) - INTERVAL 1 HOUR WHERE queue = 'promised'");
    const maintenance = db.sluice.maintenance({ jitterMs: 0 });
    try {
      expect((await maintenance.runOnce()).tasks.checkQueues).toEqual({ broken: 0, kept: 0 });
      const [promise] = await db.sluice.queues.promises();
      expect(promise).toMatchObject({ queue: 'promised', brokenAt: null });
      const [recorded] = await db.sluice.queues.recordedDepth();
      expect(recorded).toMatchObject({ held: { count: 5 }, ready: { count: 0 }, oldestReadyMs: null });
      // The same queue with two jobs due a minute ago: late and over its count, the promise breaks.
      await insertJob(db, { queue: 'promised', runAt: ago(60_000) });
      await insertJob(db, { queue: 'promised', runAt: ago(60_000) });
      expect((await maintenance.runOnce()).tasks.checkQueues).toEqual({ broken: 1, kept: 0 });
    } finally {
      await maintenance.stop();
    }
  });

  it('a held count stops at max like the others', async () => {
    await heldGraph('wide', 30);
    const [depth] = await db.sluice.queues.depth({ queue: 'wide', max: 10 });
    expect(depth?.held).toEqual({ count: 10, exact: false });
  });
});
