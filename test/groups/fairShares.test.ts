import { beforeAll, describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { defineJob } from '../../src/index.ts';
import { reconcileGroups } from '../../src/maintenance/reconcileGroups.ts';
import { HELD_RUN_AT } from '../../src/model/heldRunAt.ts';
import { createFixtureTables } from '../fixtures/fixtureTables.ts';
import { countRows } from '../helpers/factory.ts';
import { spawnWorker } from '../helpers/spawnSluice.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('fair_shares');
const A_JOBS = 2_000;

beforeAll(() => createFixtureTables(db));

/** The fair queue's jobs of group A: live (in the claim's range, or running) and held for the window. */
async function liveAndHeld(): Promise<{ live: number; held: number; active: number }> {
  const [row] = await db.query<{ live: number; held: number }>(
    `SELECT SUM(run_at <> '${HELD_RUN_AT}') AS live, SUM(run_at = '${HELD_RUN_AT}') AS held FROM sluice_jobs`,
  );
  const [group] = await db.query<{ active: number }>("SELECT active FROM sluice_job_groups WHERE group_key = 'A'");
  return { live: Number(row?.live ?? 0), held: Number(row?.held ?? 0), active: Number(group?.active) };
}

/** Enqueues A's backlog, then B's 10 jobs, drains the queue and returns the groups in the order their handlers started. */
async function startOrder(): Promise<string[]> {
  await db.sluice.enqueueBatch(
    Array.from({ length: A_JOBS }, (_, n) => ({ name: 'tenant', queue: 'fair', payload: { g: 'A', n }, group: 'A' })),
  );
  await db.sluice.enqueueBatch(
    Array.from({ length: 10 }, (_, n) => ({ name: 'tenant', queue: 'fair', payload: { g: 'B', n }, group: 'B' })),
  );
  const order: string[] = [];
  const tenant = defineJob<{ g: string }>({
    name: 'tenant',
    handle: async ({ g }) => {
      order.push(g);
    },
  });
  await withWorker(db.sluice, [tenant], { queues: ['fair'], concurrency: 4 }, async () => {
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, {
      what: 'the queue drained',
      timeoutMs: 240_000,
    });
  });
  return order;
}

describe('fair shares', () => {
  it('tenant B’s 10 jobs behind A’s 2,000 start before A drains on a fair queue, and after it without', async () => {
    await db.sluice.queues.setLimits('fair', { fair: true, fairWindow: 20 });
    const fair = await startOrder();
    expect(fair).toHaveLength(A_JOBS + 10);
    const lastB = fair.lastIndexOf('B');
    // B waits behind at most A's window (and what the claims had in hand), never behind A's backlog.
    expect(lastB).toBeLessThan(100);
    expect(fair.slice(lastB).filter((g) => g === 'A').length).toBeGreaterThan(A_JOBS - 100);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
    const [a] = await db.query<{ active: number }>("SELECT active FROM sluice_job_groups WHERE group_key = 'A'");
    expect(Number(a?.active)).toBe(0);

    await db.sluice.queues.setLimits('fair', { fair: false });
    await db.query('TRUNCATE TABLE sluice_job_groups');
    const unfair = await startOrder();
    // Without fairness B waits for A's backlog, but for the claim's head (about 100 jobs, picked at random).
    expect(unfair.indexOf('B')).toBeGreaterThan(A_JOBS - 300);
  });

  it('a worker killed before it settles leaves the window counted; reconcileGroups recounts it and releases', async () => {
    await db.sluice.queues.setLimits('fair', { fair: true, fairWindow: 4 });
    await db.sluice.enqueueBatch(
      Array.from({ length: 10 }, (_, n) => ({ name: 'record', queue: 'fair', payload: { n }, group: 'A' })),
    );
    expect(await liveAndHeld()).toEqual({ live: 4, held: 6, active: 4 });
    // A settle interval far beyond the test: the worker completes the window and never settles it.
    const worker = spawnWorker(db.url, { queues: 'fair', concurrency: 4, fairSettleIntervalMs: 600_000 });
    await worker.ready;
    await waitFor(async () => (await liveAndHeld()).live === 0, { what: 'the window to complete' });
    worker.kill('SIGKILL');
    await worker.exited;
    // Stalled: jobs held, none live, and the row still counts the four its worker never settled.
    expect(await liveAndHeld()).toEqual({ live: 0, held: 6, active: 4 });
    expect(await countRows(db, 'test_effects')).toBe(4);
    const task = reconcileGroups({ db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') }, { quietMs: 0 });
    expect(await task.runOnce()).toEqual({ recounted: 1, released: 4 });
    expect(await liveAndHeld()).toEqual({ live: 4, held: 2, active: 4 });
    // The recount counts the fair shares live (their flag is not inGroup's): nothing more is released.
    expect(await task.runOnce()).toEqual({ recounted: 1, released: 0 });
    expect(await liveAndHeld()).toEqual({ live: 4, held: 2, active: 4 });
  });
});
