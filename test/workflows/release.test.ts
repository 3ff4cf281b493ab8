import { describe, expect, it } from 'vitest';
import { defineJob, type JobContext, type ParentResult } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('workflow_release');

interface Ran {
  readonly name: string;
  readonly parents: readonly ParentResult[];
}

/** A job that records its run and returns its name; the fan-in returns the sum of its parents' results. */
function recorder(ran: Ran[]) {
  return defineJob<{ n?: number }>({
    name: 'step',
    handle: async (payload, ctx: JobContext<{ n?: number }>) => {
      const parents = await ctx.parents();
      ran.push({ name: String(ctx.job.id), parents });
      const sum = parents.reduce((total, p) => total + Number(p.result ?? 0), 0);
      return (payload.n ?? 0) + sum;
    },
  });
}

async function idsByRef(batchId: number | null): Promise<Map<number, number>> {
  const rows = await db.query<{ id: number; n: string }>(
    `SELECT job_id AS id, JSON_UNQUOTE(JSON_EXTRACT(payload, '$.n')) AS n FROM sluice_job_history WHERE batch_id = ?`,
    [batchId],
  );
  return new Map(rows.map((r) => [Number(r.n), Number(r.id)]));
}

describe('release', () => {
  it('runs a diamond in dependency order, each child with its parents results', async () => {
    const ran: Ran[] = [];
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'step', ref: 'a', payload: { n: 1 } },
      { name: 'step', ref: 'b', payload: { n: 2 }, parents: ['a'] },
      { name: 'step', ref: 'c', payload: { n: 3 }, parents: ['a'] },
      { name: 'step', payload: { n: 4 }, parents: ['b', 'c'] },
    ]);
    await withWorker(db.sluice, [recorder(ran)], { concurrency: 4 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the diamond to drain' });
    });
    const id = await idsByRef(batchId);
    const order = ran.map((r) => Number(r.name));
    expect(order[0]).toBe(id.get(1));
    expect(order[3]).toBe(id.get(4));
    const last = ran[3] as Ran;
    // d = 4 + b (2 + a) + c (3 + a) = 4 + 3 + 4
    expect(last.parents.map((p) => [p.id, p.outcome, p.result])).toEqual([
      [id.get(2), 'completed', 3],
      [id.get(3), 'completed', 4],
    ]);
    const [final] = await db.query<{ result: string }>('SELECT result FROM sluice_job_history WHERE job_id = ?', [
      id.get(4),
    ]);
    expect(JSON.parse(final?.result as string)).toBe(11);
    expect(await countRows(db, 'sluice_job_edges')).toBe(0);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });

  it('releases a child whose parent was named by id, claimed before the child existed', async () => {
    const ran: Ran[] = [];
    let releaseParent!: () => void;
    const gate = new Promise<void>((resolve) => {
      releaseParent = resolve;
    });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow = defineJob({
      name: 'slow',
      handle: async () => {
        started();
        await gate;
        return 'parent done';
      },
    });
    const { id: parent } = await db.sluice.enqueue({ name: 'slow' });
    await withWorker(db.sluice, [slow, recorder(ran)], { concurrency: 2 }, async () => {
      await running; // claimed: its worker loaded flags = 0
      await db.sluice.enqueueBatch([{ name: 'step', payload: { n: 1 }, parents: [parent] }]);
      releaseParent();
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the child to run' });
    });
    expect(ran).toHaveLength(1);
    expect(ran[0]?.parents).toEqual([{ id: parent, outcome: 'completed', result: 'parent done' }]);
  });

  it('keeps held jobs out of the claim: a later job runs, the held one does not', async () => {
    const ran: Ran[] = [];
    await db.sluice.enqueueBatch([
      { name: 'step', ref: 'a', queue: 'other' },
      { name: 'step', payload: { n: 1 }, parents: ['a'] },
    ]);
    await withWorker(db.sluice, [recorder(ran)], { queues: ['default'] }, async () => {
      const { id } = await db.sluice.enqueue({ name: 'step', payload: { n: 2 } });
      await waitFor(() => ran.some((r) => Number(r.name) === id), { what: 'the later job to run' });
    });
    expect(ran).toHaveLength(1);
    expect(await countRows(db, 'sluice_job_holds')).toBe(1);
  });
});
