import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { countRows, MINUTE } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * `sluice.batches.finishedGraph`: a workflow's graph outlives its jobs. As a child leaves the live
 * table (completed, dead, cancelled) its edges are kept in job_graph_history with the history's
 * retention, so a batch that has run can still say what depended on what and how each job ended.
 * jobs.get gives a finished job its parents and children from them. Without history nothing is
 * kept; the maintenance prunes them with the history.
 */
const db = useTestDatabase('workflow_finished_graph');

const jobs = ['extract', 'transform', 'load', 'report'].map((name) =>
  defineJob({
    name,
    maxRetries: 0,
    handle: () => {
      if (name === 'load') throw new Error('warehouse down');
    },
  }),
);

async function runGraph(sluice = db.sluice) {
  const { batchId } = await sluice.enqueueBatch([
    { name: 'extract', ref: 'e' },
    { name: 'transform', ref: 't', parents: ['e'] },
    { name: 'load', ref: 'l', parents: ['t'] },
    { name: 'report', parents: ['t', 'l'] },
  ]);
  const { jobs: listed } = await sluice.jobs.list({ batchId: batchId as number }, { limit: 10 });
  const ids = Object.fromEntries(listed.map((j) => [j.name, j.id])) as Record<string, number>;
  await withWorker(sluice, jobs, { concurrency: 2 }, async () => {
    await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the graph to run' });
  });
  return { batchId: batchId as number, ids };
}

describe('a finished graph', () => {
  it('keeps every edge of the jobs that finished, with how each job ended, in two statements', async () => {
    const { batchId, ids } = await runGraph();
    const statements: string[] = [];
    const sluice = db.open();
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    const graph = await sluice.batches.finishedGraph(batchId);
    expect(statements).toHaveLength(2);
    statements.length = 0;
    expect(graph.complete).toBe(true);
    const edge = (parent: string, child: string) => ({ parentId: ids[parent], childId: ids[child] });
    expect(graph.edges).toEqual(
      expect.arrayContaining([
        edge('extract', 'transform'),
        edge('transform', 'load'),
        edge('transform', 'report'),
        edge('load', 'report'),
      ]),
    );
    expect(graph.edges).toHaveLength(4);
    expect(Object.fromEntries([...graph.outcomes].map(([id, o]) => [id, o]))).toEqual({
      [ids.extract as number]: 'completed',
      [ids.transform as number]: 'completed',
      [ids.load as number]: 'dead',
      [ids.report as number]: 'cancelled',
    });
    // A finished job's own place in it, from the kept edges: jobs.get names its parents and
    // children with how each ended.
    const transform = await sluice.jobs.get(ids.transform as number);
    expect(transform?.workflow).toEqual({
      parents: [{ id: ids.extract, outcome: 'completed', continueOnFailure: false }],
      children: [
        { id: ids.load, outcome: 'dead', continueOnFailure: false },
        { id: ids.report, outcome: 'cancelled', continueOnFailure: false },
      ],
      held: null,
    });
    expect((await sluice.jobs.get(ids.report as number))?.workflow?.parents).toEqual([
      { id: ids.transform, outcome: 'completed', continueOnFailure: false },
      { id: ids.load, outcome: 'dead', continueOnFailure: false },
    ]);
    // Bounded: a limit reads one more edge to say the graph is cut.
    const cut = await sluice.batches.finishedGraph(batchId, { limit: 3 });
    expect(cut).toMatchObject({ complete: false });
    expect(cut.edges).toHaveLength(3);
  });

  it('keeps the edges of a child the maintenance dead-letters (its worker vanished on its last attempt)', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'extract', ref: 'e' },
      { name: 'transform', parents: ['e'], maxRetries: 0 },
    ]);
    const { jobs: listed } = await db.sluice.jobs.list({ batchId: batchId as number }, { limit: 10 });
    const ids = Object.fromEntries(listed.map((j) => [j.name, j.id])) as Record<string, number>;
    // Only extract runs here; transform, released by it, is then claimed by a worker that vanishes.
    await withWorker(db.sluice, [jobs[0] as (typeof jobs)[number]], {}, async () => {
      await waitFor(async () => (await db.sluice.jobs.get(ids.extract as number))?.state === 'completed');
    });
    await db.query("UPDATE sluice_jobs SET lock_id = 'gone~zz.1', locked_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?", [
      ids.transform,
    ]);
    const clock = fakeClock();
    const maintenance = db.sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now });
    await maintenance.runOnce();
    clock.advance(MINUTE);
    expect(await maintenance.runOnce()).toMatchObject({
      tasks: { releaseStaleClaims: { claims: 1, deadLettered: 1 } },
    });
    await maintenance.stop();
    const graph = await db.sluice.batches.finishedGraph(batchId as number);
    expect(graph.edges).toEqual([{ parentId: ids.extract, childId: ids.transform }]);
    expect(graph.outcomes.get(ids.transform as number)).toBe('dead');
    expect(graph.outcomes.get(ids.extract as number)).toBe('completed');
  });

  it('keeps nothing without history, and is pruned with the history', async () => {
    const off = await runGraph(db.open({ historyRetentionMs: 0 }));
    expect((await db.sluice.batches.finishedGraph(off.batchId)).edges).toEqual([]);

    const on = await runGraph();
    expect((await db.sluice.batches.finishedGraph(on.batchId)).edges).toHaveLength(4);
    await db.query('UPDATE sluice_job_graph_history SET finished_at = NOW(3) - INTERVAL 2 DAY');
    const maintenance = db.open({ historyRetentionMs: 86_400_000 }).maintenance({ jitterMs: 0 });
    const pass = await maintenance.runOnce();
    await maintenance.stop();
    expect(pass.tasks.pruneGraphHistory).toEqual({ pruned: 4 });
    expect(await countRows(db, 'sluice_job_graph_history')).toBe(0);
  });
});
