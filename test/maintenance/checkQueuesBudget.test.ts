import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import type { PromiseBroken } from '../../src/events.ts';
import { checkQueues } from '../../src/maintenance/checkQueues.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * checkQueues over its budget: a pass stops after the read that crossed it, the next goes on from
 * there, and every queue is read, every promise judged, within a stated number of passes. A cycle's
 * reads start at 10 queues and grow fourfold while light, up to 100; fewer where queues are deep
 * (about 20,000 index entries a read). 250 queues with a ready job each; the last one, `q-249`,
 * promised a start within 2 s and late by 12 s. The clock moves a second at every reading, so
 * every read spends the 1 s budget.
 */
const db = useTestDatabase('check_queues_budget');

describe('checkQueues at more queues than a pass reads', () => {
  it('carries the reading over to the next passes (10, 40, 100, 100 queues) and judges the last queue in the 4th', async () => {
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('q-', LPAD(seq, 3, '0')), 'work', '{}', 0, NOW(3) - INTERVAL 12 SECOND, NOW(3) FROM seq_0_to_249`,
    );
    await db.sluice.queues.setPromise('q-249', { startWithinMs: 2_000 });
    let now = 0;
    const broken: PromiseBroken[] = [];
    const task = checkQueues(
      { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') },
      {
        intervalMs: 0,
        clock: () => (now += 1_000),
        maxQueues: 1_000,
        depthMax: 10_000,
        budgetMs: 1_000,
        onBroken: (b) => broken.push(b),
        onKept: () => undefined,
      },
    );
    const recorded: number[] = [];
    const counts = [];
    for (let pass = 0; pass < 4; pass++) {
      counts.push(await task.runOnce());
      recorded.push(await countRows(db, 'sluice_queue_depths'));
    }
    expect(recorded).toEqual([10, 50, 150, 250]);
    expect(counts).toEqual([
      { broken: 0, kept: 0 },
      { broken: 0, kept: 0 },
      { broken: 0, kept: 0 },
      { broken: 1, kept: 0 },
    ]);
    expect(broken.map((b) => [b.queue, b.breaches])).toEqual([['q-249', ['startWithin']]]);
    // The next cycle begins afresh; a queue gone since is forgotten once it has read every queue.
    await db.query("DELETE FROM sluice_jobs WHERE queue = 'q-000'");
    for (let pass = 0; pass < 4; pass++) await task.runOnce();
    expect(await countRows(db, 'sluice_queue_depths')).toBe(249);
  });

  it('reads fewer queues at a time where they are deep: 5,000 jobs a queue, 4 queues a read', async () => {
    // q-00 … q-09 hold 5,000 ready jobs each; q-10 … q-19 one each.
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('q-', LPAD(q.seq, 2, '0')), 'work', '{}', 0, NOW(3), NOW(3)
       FROM seq_0_to_9 q CROSS JOIN seq_1_to_5000 n`,
    );
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('q-', seq), 'work', '{}', 0, NOW(3), NOW(3) FROM seq_10_to_19`,
    );
    // Statistics that say the queues are deep: the listing is one loose index scan of the 20.
    await db.query('ANALYZE TABLE sluice_jobs');
    const task = checkQueues(
      { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') },
      {
        intervalMs: 0,
        clock: () => performance.now(),
        maxQueues: 1_000,
        depthMax: 10_000,
        budgetMs: 60_000,
        onBroken: () => undefined,
        onKept: () => undefined,
      },
    );
    // Nothing left of the pass's budget: one read a run.
    const recorded: number[] = [];
    for (let pass = 0; pass < 3; pass++) {
      await task.runOnce(0);
      recorded.push(await countRows(db, 'sluice_queue_depths'));
    }
    // The first read's 10 deep queues make the next read 20,000 ÷ 5,000 = 4 queues; those 4 are
    // light, and the next grows fourfold (16: the 6 left).
    expect(recorded).toEqual([10, 14, 20]);
  });
});
