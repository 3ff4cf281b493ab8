import { describe, expect, it } from 'vitest';
import { type Executor, fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { reconcileGroups } from '../../src/maintenance/reconcileGroups.ts';
import { beforeFirstTransaction } from '../helpers/raceExecutor.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('reconcile_groups');
const HELD = '9999-12-31 23:59:59.000';
const tables = tablesFor('sluice_');

/** Enqueues `jobs` jobs into each group g0…g(n-1) of limit 1: one free, the rest held. */
async function groups(n: number, jobs: number): Promise<void> {
  await db.sluice.enqueueBatch(
    Array.from({ length: n * jobs }, (_, i) => ({
      name: 'g',
      payload: { i },
      group: `g${Math.floor(i / jobs)}`,
      groupLimits: { concurrency: 1 },
    })),
  );
}

async function actives(): Promise<Record<string, number>> {
  const rows = await db.query<{ group_key: string; active: number }>(
    'SELECT group_key, active FROM sluice_job_groups ORDER BY group_key',
  );
  return Object.fromEntries(rows.map((r) => [r.group_key, Number(r.active)]));
}

async function freeJobs(): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sluice_jobs WHERE run_at <> '${HELD}'`);
  return Number(row?.n);
}

/** The session's index and table reads so far (every Handler_read_* counter summed). */
async function rowsRead(exec: Executor): Promise<number> {
  const rows = await exec.select<{ Variable_name: string; Value: string }>("SHOW SESSION STATUS LIKE 'Handler_read%'");
  return rows.reduce((sum, r) => sum + Number(r.Value), 0);
}

describe('reconcileGroups', () => {
  it("reads each group's members, not the jobs table: rows read follow the groups' size, not the backlog's", async () => {
    // 20 groups of 3 jobs behind a backlog of 20,000 ungrouped jobs in the same queue, every
    // group's count corrupted so that each is recounted.
    await db.sluice.enqueueBatch(Array.from({ length: 20_000 }, (_, i) => ({ name: 'plain', payload: { i } })));
    await groups(20, 3);
    await db.query('UPDATE sluice_job_groups SET active = 5');
    await db.query('ANALYZE TABLE sluice_jobs, sluice_job_group_members, sluice_job_groups');
    // One connection: the session's counters are the task's.
    const single = db.open({ poolMax: 1 });
    const exec = fromKnex(single.knex);
    const task = reconcileGroups({ db: exec, tables }, { quietMs: 0, budgetMs: 600_000 });
    const before = await rowsRead(exec);
    expect(await task.runOnce()).toEqual({ recounted: 20, released: 0 });
    const read = (await rowsRead(exec)) - before;
    expect(Object.values(await actives())).toEqual(Array(20).fill(1));
    // Per group: its 3 members, 3 look-ups, its row, a probe of its holds, a few for the fenced
    // write and the settle; plus the SHOW itself. A recount through the queue's jobs read 20,000 a group.
    expect(read).toBeLessThan(2_000);
  });

  it('a count stopped by the bound goes on at the next pass; every group is reached within the stated passes', async () => {
    await groups(3, 5);
    await db.query('UPDATE sluice_job_groups SET active = 4');
    // Two statements a pass, two rows each (and a budget no pass reaches): a group of five members
    // takes three pages to count.
    const task = reconcileGroups(
      { db: fromKnex(db.sluice.knex), tables },
      { quietMs: 0, batchSize: 2, maxBatches: 2, budgetMs: 600_000 },
    );
    const recounted: number[] = [];
    for (let pass = 0; pass < 12 && Object.values(await actives()).some((a) => a !== 1); pass++)
      recounted.push((await task.runOnce()).recounted);
    // 2 pages of groups (the second short) + 3 groups × 3 pages of members = 11 statements: 6 passes.
    expect(recounted).toEqual([0, 1, 0, 1, 0, 1]);
    expect(await actives()).toEqual({ g0: 1, g1: 1, g2: 1 });
    expect(await freeJobs()).toBe(3);
  });

  it('a group that moves between its count and the write is left as it settled itself', async () => {
    await groups(1, 3);
    // Right after the count (1 free job), before the write: the limit goes to 2 and a held job is
    // released (2 free, active 2). Writing the stale count (1) would leave room for a third.
    const exec = beforeFirstTransaction(db.sluice.knex, async () => {
      expect(await db.sluice.queues.setGroupLimits('default', 'g0', { concurrency: 2 })).toBe(1);
    });
    const task = reconcileGroups({ db: exec, tables }, { quietMs: 0, budgetMs: 600_000 });
    expect(await task.runOnce()).toEqual({ recounted: 0, released: 0 });
    expect(exec.injected).toBe(true);
    expect(await actives()).toEqual({ g0: 2 });
    expect(await freeJobs()).toBe(2);
    // The next pass counts afresh: nothing to change.
    expect(await task.runOnce()).toEqual({ recounted: 1, released: 0 });
    expect(await freeJobs()).toBe(2);
  });

  it('takes a step of its walk even in a pass whose budget is spent', async () => {
    await groups(3, 2);
    await db.query('UPDATE sluice_job_groups SET active = 5');
    const task = reconcileGroups({ db: fromKnex(db.sluice.knex), tables }, { quietMs: 0 });
    // Nothing left of the pass: one step all the same, so the walk moves on — a page of groups
    // read, then its first group recounted at the next such pass, and so on.
    expect(await task.runOnce(0)).toEqual({ recounted: 0, released: 0 });
    expect(await task.runOnce(0)).toEqual({ recounted: 1, released: 0 });
  });

  it('refuses a bad option by name', () => {
    for (const [options, name] of [
      [{ budgetMs: 0 }, 'budgetMs'],
      [{ maxBatches: 1.5 }, 'maxBatches'],
      [{ batchSize: 0 }, 'batchSize'],
    ] as const)
      expect(() => reconcileGroups({ db: fromKnex(db.sluice.knex), tables }, options)).toThrow(name);
  });
});
