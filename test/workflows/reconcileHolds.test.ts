import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { deadLetterExhausted } from '../../src/maintenance/deadLetterExhausted.ts';
import { reconcileHolds } from '../../src/maintenance/reconcileHolds.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('reconcile_holds');

function reconciler() {
  return reconcileHolds(
    { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') },
    { batchSize: 2, cancel: { history: true, keyRetentionMs: 0 } },
  );
}

async function idOf(name: string): Promise<number> {
  const [row] = await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE name = ?', [name]);
  return Number(row?.id);
}

/** What the maintenance process does to a job whose worker died with its retries used up: a move to dead_jobs, no settling. */
async function deadLetterAroundTheGraph(id: number): Promise<void> {
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, created_at, failed_at)
     SELECT id, queue, name, payload, priority, retry_times, 0, created_at, NOW(3) FROM sluice_jobs WHERE id = ?`,
    [id],
  );
  await db.query('DELETE FROM sluice_jobs WHERE id = ?', [id]);
}

describe('reconcileHolds', () => {
  it('settles children of a parent that left without settling them: cancels, or releases on continueOnFailure', async () => {
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      { name: 'strict', parents: ['p'] },
      { name: 'lenient', parents: [{ job: 'p', continueOnFailure: true }] },
      { name: 'later', parents: ['p', 'q'] },
      { name: 'other', ref: 'q' },
    ]);
    const parent = await idOf('parent');
    await deadLetterAroundTheGraph(parent);
    const task = reconciler();
    expect(await task.runOnce()).toEqual({ settled: 1, released: 1, cancelled: 2 });
    const names = await db.query<{ name: string; state: string }>(
      `SELECT name, IF(run_at = '9999-12-31 23:59:59.000', 'held', 'free') AS state FROM sluice_jobs ORDER BY id`,
    );
    expect(names).toEqual([
      { name: 'lenient', state: 'free' },
      { name: 'other', state: 'free' },
    ]);
    const [strict] = await db.query<{ outcome: string; last_error: string }>(
      "SELECT outcome, last_error FROM sluice_job_history WHERE name = 'strict'",
    );
    expect(strict).toEqual({ outcome: 'cancelled', last_error: `cancelled: parent job ${parent} died` });
    expect(await task.runOnce()).toEqual({ settled: 0, released: 0, cancelled: 0 });
  });

  it('cancels a held child whose parent is gone with nothing known of it (lost), and releases one waiting for nobody', async () => {
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      { name: 'child', parents: ['p'] },
      { name: 'p2', ref: 'p2' },
      { name: 'child2', parents: ['p2'] },
    ]);
    await db.query('DELETE FROM sluice_jobs WHERE name = ?', ['parent']);
    await db.query("UPDATE sluice_job_edges SET parent_outcome = 'completed' WHERE parent_id = ?", [await idOf('p2')]);
    expect(await reconciler().runOnce()).toEqual({ settled: 1, released: 1, cancelled: 1 });
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
    expect(await countRows(db, 'sluice_jobs', "run_at = '9999-12-31 23:59:59.000'")).toBe(0);
    expect(await countRows(db, 'sluice_job_history', "name = 'child' AND outcome = 'cancelled'")).toBe(1);
  });

  it('a job dead-lettered by the maintenance process leaves its graph there: nothing is left to settle here', async () => {
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      { name: 'middle', ref: 'm', parents: [{ job: 'p', continueOnFailure: true }], maxRetries: 0 },
      { name: 'last', parents: ['m'] },
    ]);
    const parent = await idOf('parent');
    const middle = await idOf('middle');
    await db.query("UPDATE sluice_jobs SET run_at = NOW(3), retry_times = 1 WHERE name = 'middle'");
    await db.query('DELETE FROM sluice_job_holds WHERE job_id = ?', [middle]);
    const exec = fromKnex(db.sluice.knex);
    const rules = { redact: null, cancel: { history: true, keyRetentionMs: 0 }, onReleased: null };
    expect(await deadLetterExhausted(exec, tablesFor('sluice_'), [middle], 10, rules)).toBe(1);
    expect(await countRows(db, 'sluice_job_edges', 'child_id = ?', [middle])).toBe(0);
    expect(await countRows(db, 'sluice_job_history', "name = 'last' AND outcome = 'cancelled'")).toBe(1);
    expect(await reconciler().runOnce()).toEqual({ settled: 0, released: 0, cancelled: 0 });
    expect(await countRows(db, 'sluice_job_edges')).toBe(0);
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
    expect(await idOf('parent')).toBe(parent);
  });

  it('a pass over its time budget stops after its page; the walk goes on and reaches every held job within the stated passes', async () => {
    // 25 children of a parent that completed around sluice (its edges settled, the holds left):
    // each is waiting for nobody, and the walk releases it when it reaches it.
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      ...Array.from({ length: 25 }, () => ({ name: 'child', parents: ['p'] })),
    ]);
    await db.query("UPDATE sluice_job_edges SET parent_outcome = 'completed'");
    // A clock that moves a second at every reading: every page overruns the 1 s budget.
    let now = 0;
    const task = reconcileHolds(
      { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') },
      { batchSize: 10, budgetMs: 1_000, clock: () => (now += 1_000) },
    );
    const released: number[] = [];
    for (let pass = 0; pass < 6 && (await countRows(db, 'sluice_job_holds')) > 0; pass++)
      released.push((await task.runOnce()).released);
    // One page a pass: ceil(25 ÷ 10) = 3 passes (the stated bound is that + 1, for a walk begun mid-way).
    expect(released).toEqual([10, 10, 5]);
    expect(await countRows(db, 'sluice_jobs', "run_at = '9999-12-31 23:59:59.000'")).toBe(0);
    // Without the budget, one pass does it all.
    await db.sluice.enqueueBatch([
      { name: 'parent2', ref: 'p' },
      ...Array.from({ length: 25 }, () => ({ name: 'child2', parents: ['p'] })),
    ]);
    await db.query("UPDATE sluice_job_edges SET parent_outcome = 'completed'");
    const unbounded = reconcileHolds(
      { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') },
      { batchSize: 10, budgetMs: 600_000 },
    );
    expect((await unbounded.runOnce()).released).toBe(25);
  });

  it('refuses a bad budget or clock by name', () => {
    const taskDb = { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') };
    expect(() => reconcileHolds(taskDb, { budgetMs: 0 })).toThrow('budgetMs');
    expect(() => reconcileHolds(taskDb, { clock: 5 as never })).toThrow('clock');
  });
});
