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
});
