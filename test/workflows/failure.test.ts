import { describe, expect, it } from 'vitest';
import { defineJob, type ParentResult } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('workflow_failure');

const doomed = defineJob({
  name: 'doomed',
  maxRetries: 0,
  handle: () => {
    throw new Error('no luck');
  },
});

function recorder(ran: Map<string, readonly ParentResult[]>) {
  return defineJob<{ tag: string }>({
    name: 'step',
    handle: async (payload, ctx) => {
      ran.set(payload.tag, await ctx.parents());
    },
  });
}

async function historyOf(tag: string): Promise<{ outcome: string; last_error: string | null } | undefined> {
  const [row] = await db.query<{ outcome: string; last_error: string | null }>(
    `SELECT outcome, last_error FROM sluice_job_history WHERE JSON_UNQUOTE(JSON_EXTRACT(payload, '$.tag')) = ?`,
    [tag],
  );
  return row;
}

describe('failure in a workflow', () => {
  it('a dead parent cancels its dependents naming it, and runs those that continue on failure', async () => {
    const ran = new Map<string, readonly ParentResult[]>();
    await db.sluice.enqueueBatch([
      { name: 'doomed', ref: 'p' },
      { name: 'step', ref: 'child', payload: { tag: 'child' }, parents: ['p'] },
      { name: 'step', payload: { tag: 'grandchild' }, parents: ['child'] },
      { name: 'step', payload: { tag: 'cleanup' }, parents: [{ job: 'p', continueOnFailure: true }] },
    ]);
    const [parent] = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE name = 'doomed'");
    await withWorker(db.sluice, [doomed, recorder(ran)], { concurrency: 2 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the graph to settle' });
    });
    expect([...ran.keys()]).toEqual(['cleanup']);
    expect(ran.get('cleanup')).toEqual([{ id: Number(parent?.id), outcome: 'dead', result: undefined }]);
    expect(await historyOf('child')).toEqual({
      outcome: 'cancelled',
      last_error: `cancelled: parent job ${parent?.id} died`,
    });
    expect((await historyOf('grandchild'))?.outcome).toBe('cancelled');
    expect(await countRows(db, 'sluice_job_edges')).toBe(0);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });

  it('docs/workflows.md, "When a parent fails": notify-team runs and sees the import dead, the reindex cancelled', async () => {
    const ran = new Map<string, readonly ParentResult[]>();
    // The graph of the guide, with `step` standing in for reindex and notify-team.
    await db.sluice.enqueueBatch([
      { name: 'doomed', ref: 'import' },
      { name: 'step', ref: 'reindex', payload: { tag: 'reindex' }, parents: ['import'] },
      {
        name: 'step',
        payload: { tag: 'notify-team' },
        parents: [
          { job: 'import', continueOnFailure: true },
          { job: 'reindex', continueOnFailure: true },
        ],
      },
      // What the guide warns of: naming reindex plainly cancels the notice with it.
      { name: 'step', payload: { tag: 'plain' }, parents: [{ job: 'import', continueOnFailure: true }, 'reindex'] },
    ]);
    await withWorker(db.sluice, [doomed, recorder(ran)], { concurrency: 2 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the graph to settle' });
    });
    expect([...ran.keys()]).toEqual(['notify-team']);
    expect(ran.get('notify-team')?.map((p) => p.outcome)).toEqual(['dead', 'cancelled']);
    expect((await historyOf('plain'))?.outcome).toBe('cancelled');
  });

  it('cancelling a job cancels what depends on it, and cancelling a batch cancels its graph', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'step', ref: 'a', payload: { tag: 'a' } },
      { name: 'step', ref: 'b', payload: { tag: 'b' }, parents: ['a'] },
      { name: 'step', payload: { tag: 'c' }, parents: ['b'] },
    ]);
    const [b] = await db.query<{ id: number }>(
      "SELECT id FROM sluice_jobs WHERE JSON_UNQUOTE(JSON_EXTRACT(payload, '$.tag')) = 'b'",
    );
    expect(await db.sluice.jobs.cancel(Number(b?.id))).toEqual({ cancelled: 2 });
    expect((await historyOf('c'))?.last_error).toBe(`cancelled: parent job ${b?.id} cancelled`);
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
    expect(await db.sluice.jobs.cancel({ batchId: batchId as number })).toEqual({ cancelled: 1 });
    for (const table of ['sluice_jobs', 'sluice_job_edges', 'sluice_job_holds'])
      expect(await countRows(db, table)).toBe(0);
  });

  it('shows a held job as held, and run-now leaves it held', async () => {
    await db.sluice.enqueueBatch([
      { name: 'step', ref: 'a', payload: { tag: 'a' } },
      { name: 'step', payload: { tag: 'b' }, parents: ['a'] },
    ]);
    const [b] = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE JSON_EXTRACT(payload, '$.tag') = 'b'");
    expect(await db.sluice.jobs.runNow(Number(b?.id))).toBe(0);
    expect((await db.sluice.jobs.get(Number(b?.id)))?.state).toBe('held');
    const held = await db.sluice.jobs.list({ state: 'held' });
    expect(held.jobs.map((j) => j.id)).toEqual([Number(b?.id)]);
    expect((await db.sluice.jobs.list({ state: 'delayed' })).jobs).toEqual([]);
    const [depth] = await db.sluice.queues.depth({ queue: 'default' });
    expect(depth).toMatchObject({
      ready: { count: 1, exact: true },
      notDue: { count: 0, exact: true },
      held: { count: 1, exact: true },
    });
  });
});
