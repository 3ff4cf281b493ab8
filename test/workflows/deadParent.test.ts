import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { pruneDeadJobs } from '../../src/deadJobs/pruneDeadJobs.ts';
import { reconcileHolds } from '../../src/maintenance/reconcileHolds.ts';
import { countRows, MINUTE } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A workflow child never runs after its parent died, whichever process moved the parent to
 * dead_jobs and whatever happens to the dead row afterwards (pruned, purged).
 */
const db = useTestDatabase('dead_parent');

const HELD = "run_at = '9999-12-31 23:59:59.000'";

async function idOf(name: string): Promise<number> {
  const [row] = await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE name = ?', [name]);
  return Number(row?.id);
}

/** The live jobs (but the filler) and whether each is held. */
function live(): Promise<{ name: string; held: number }[]> {
  return db.query(`SELECT name, ${HELD} AS held FROM sluice_jobs WHERE name <> 'waiting' ORDER BY id`);
}

/** The cancelled jobs in the history and why. */
function cancelled(): Promise<{ name: string; last_error: string }[]> {
  return db.query("SELECT name, last_error FROM sluice_job_history WHERE outcome = 'cancelled' ORDER BY job_id");
}

describe('a dead parent', () => {
  it('dead-lettered by the maintenance process settles its children in the same transaction: pruning cannot release them', async () => {
    const sluice = db.open({ deadRetentionMs: 0 });
    const clock = fakeClock();
    // batchSize 1: the reconciler reads 200 holds a pass; 450 held jobs ahead of the children
    // mean the dead row is pruned long before it would get to them.
    const maintenance = sluice.maintenance({ lockTimeoutMs: MINUTE, jitterMs: 0, clock: clock.now, batchSize: 1 });
    await sluice.enqueueBatch([
      { name: 'blocker', ref: 'b' },
      ...Array.from({ length: 450 }, () => ({ name: 'waiting', parents: ['b'] })),
      { name: 'parent', ref: 'p', maxRetries: 0 },
      { name: 'strict', ref: 's', parents: ['p'] },
      { name: 'below', parents: ['s'] },
      { name: 'lenient', ref: 'l', parents: [{ job: 'p', continueOnFailure: true }] },
    ]);
    const parent = await idOf('parent');
    const lenient = await idOf('lenient');
    // Its worker died holding it, with its one attempt used.
    await db.query("UPDATE sluice_jobs SET lock_id = 'gone~a.1', locked_at = NOW(3) WHERE id = ?", [parent]);
    await maintenance.runOnce();
    clock.advance(MINUTE);

    const pass = await maintenance.runOnce();

    expect(pass.tasks.releaseStaleClaims).toEqual({ claims: 1, deadLettered: 1 });
    expect(await live()).toEqual([
      { name: 'blocker', held: 0 },
      { name: 'lenient', held: 0 },
    ]);
    expect(await cancelled()).toEqual([
      { name: 'strict', last_error: `cancelled: parent job ${parent} died` },
      { name: 'below', last_error: `cancelled: parent job ${await historyId('strict')} cancelled` },
    ]);
    expect((await sluice.jobs.get(lenient))?.workflow?.parents).toEqual([
      { id: parent, outcome: 'dead', continueOnFailure: true },
    ]);
    // The reconciler walks the 450 holds over the next passes while the dead row is pruned: nothing changes.
    for (let i = 0; i < 4; i++) await maintenance.runOnce();
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    expect(await live()).toEqual([
      { name: 'blocker', held: 0 },
      { name: 'lenient', held: 0 },
    ]);
    expect(await countRows(db, 'sluice_jobs', `name = 'waiting' AND ${HELD}`)).toBe(450);
    await maintenance.stop();
  });

  it('with unsettled children (written around sluice) is neither pruned nor purged until the reconciler settles them', async () => {
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      { name: 'strict', parents: ['p'] },
    ]);
    const parent = await idOf('parent');
    // What an earlier sluice's maintenance process did: a move to dead_jobs, the children left pending.
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, created_at, failed_at)
       SELECT id, queue, name, payload, priority, 1, 0, created_at, NOW(3) - INTERVAL 1 MINUTE FROM sluice_jobs WHERE id = ?`,
      [parent],
    );
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [parent]);
    const taskDb = { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') };
    const prune = pruneDeadJobs(taskDb, { retentionMs: 0, jitterMs: 0 });

    expect(await prune.runOnce()).toEqual({ pruned: 0 });
    expect(await db.sluice.deadJobs.purge({})).toEqual({ purged: 0 });
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(1);

    const reconciler = reconcileHolds(taskDb, { batchSize: 1, cancel: { history: true, keyRetentionMs: 0 } });
    expect(await reconciler.runOnce()).toEqual({ settled: 1, released: 0, cancelled: 1 });
    expect(await cancelled()).toEqual([{ name: 'strict', last_error: `cancelled: parent job ${parent} died` }]);
    expect(await prune.runOnce()).toEqual({ pruned: 1 });
  });

  it('that left no trace is lost, not completed: its children are cancelled, or run knowing it', async () => {
    await db.sluice.enqueueBatch([
      { name: 'parent', ref: 'p' },
      { name: 'strict', parents: ['p'] },
      { name: 'lenient', parents: [{ job: 'p', continueOnFailure: true }] },
    ]);
    const parent = await idOf('parent');
    const lenient = await idOf('lenient');
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [parent]);
    const taskDb = { db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') };
    const reconciler = reconcileHolds(taskDb, { cancel: { history: true, keyRetentionMs: 0 } });

    expect(await reconciler.runOnce()).toEqual({ settled: 1, released: 1, cancelled: 1 });
    expect(await cancelled()).toEqual([{ name: 'strict', last_error: `cancelled: parent job ${parent} was lost` }]);
    expect(await live()).toEqual([{ name: 'lenient', held: 0 }]);
    expect((await db.sluice.jobs.get(lenient))?.workflow?.parents).toEqual([
      { id: parent, outcome: 'lost', continueOnFailure: true },
    ]);
  });
});

async function historyId(name: string): Promise<number> {
  const [row] = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_history WHERE name = ?', [name]);
  return Number(row?.job_id);
}
