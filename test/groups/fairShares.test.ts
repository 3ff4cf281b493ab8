import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('fair_shares');
const A_JOBS = 2_000;

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
});
