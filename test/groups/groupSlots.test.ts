import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { JobValidationError } from '../../src/errors.ts';
import { defineJob, jobOf } from '../../src/index.ts';
import { reconcileGroups } from '../../src/maintenance/reconcileGroups.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('group_slots');
const HELD = '9999-12-31 23:59:59.000';

async function group(queue: string, key: string): Promise<{ limit: number | null; active: number } | undefined> {
  const [row] = await db.query<{ concurrency_limit: number | null; active: number }>(
    'SELECT concurrency_limit, active FROM sluice_job_groups WHERE queue = ? AND group_key = ?',
    [queue, key],
  );
  return row && { limit: row.concurrency_limit, active: Number(row.active) };
}

/** Live jobs by payload n, each free (claimable in time) or held. */
async function states(): Promise<Record<string, 'held' | 'free'>> {
  const rows = await db.query<{ n: string; held: number }>(
    `SELECT JSON_EXTRACT(payload, '$.n') AS n, run_at = '${HELD}' AS held FROM sluice_jobs ORDER BY id`,
  );
  return Object.fromEntries(rows.map((r) => [String(r.n), Number(r.held) === 1 ? 'held' : 'free']));
}

describe('group slots', () => {
  it('holds what is over the limit and releases one per finished job, by priority then run_at', async () => {
    const base = Date.now() - 60_000;
    await db.sluice.enqueueBatch([
      { name: 'g', payload: { n: 1 }, group: 'acct', groupLimits: { concurrency: 1 }, runAt: new Date(base) },
      { name: 'g', payload: { n: 2 }, group: 'acct', runAt: new Date(base + 3_000) },
      { name: 'g', payload: { n: 3 }, group: 'acct', runAt: new Date(base + 1_000), priority: 5 },
      { name: 'g', payload: { n: 4 }, group: 'acct', runAt: new Date(base + 2_000) },
      { name: 'g', payload: { n: 5 }, group: 'other' },
    ]);
    expect(await states()).toEqual({ 1: 'free', 2: 'held', 3: 'held', 4: 'held', 5: 'free' });
    expect(await group('default', 'acct')).toEqual({ limit: 1, active: 1 });
    // A group with no limit on a queue that is not fair pays nothing: no row, no flag.
    expect(await group('default', 'other')).toBeUndefined();
    const [plain] = await db.query<{ flags: number }>(
      "SELECT flags FROM sluice_jobs WHERE JSON_EXTRACT(payload, '$.n') = 5",
    );
    expect(Number(plain?.flags)).toBe(0);
    const order: number[] = [];
    const job = defineJob<{ n: number }>({
      name: 'g',
      handle: async ({ n }) => {
        order.push(n);
      },
    });
    await withWorker(db.sluice, [job], { concurrency: 4 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the group to drain' });
    });
    expect(order.filter((n) => n !== 5)).toEqual([1, 4, 2, 3]);
    expect(await group('default', 'acct')).toEqual({ limit: 1, active: 0 });
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });

  it('passes the slot on when a job is cancelled, dead-lettered, and drops a cancelled hold', async () => {
    await db.sluice.enqueueBatch(
      [1, 2, 3, 4].map((n) => ({
        name: 'fail',
        payload: { n },
        group: 'g',
        groupLimits: { concurrency: 1 },
        maxRetries: 0,
      })),
    );
    const ids = (await db.query<{ id: number }>('SELECT id FROM sluice_jobs ORDER BY id')).map((r) => Number(r.id));
    expect(await states()).toEqual({ 1: 'free', 2: 'held', 3: 'held', 4: 'held' });
    await db.sluice.jobs.cancel(ids[2] as number); // held: its hold goes, nobody moves
    expect(await states()).toEqual({ 1: 'free', 2: 'held', 4: 'held' });
    await db.sluice.jobs.cancel(ids[0] as number); // holds the slot: 2 takes it
    expect(await states()).toEqual({ 2: 'free', 4: 'held' });
    expect(await group('default', 'g')).toEqual({ limit: 1, active: 1 });
    const fail = defineJob({
      name: 'fail',
      handle: async () => {
        throw new Error('no');
      },
    });
    await withWorker(db.sluice, [fail], { concurrency: 2 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_dead_jobs')) === 2, { what: 'both to die' });
    });
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await group('default', 'g')).toEqual({ limit: 1, active: 0 });
  });

  it('applies the queue default and a definition group function, and setGroupLimits releases at once', async () => {
    await db.sluice.queues.setLimits('q', { groupConcurrency: 2 });
    const sync = defineJob<{ account: string; n: number }>({
      name: 'sync',
      queue: 'q',
      group: (p) => `account-${p.account}`,
      handle: async () => undefined,
    });
    await db.sluice.enqueueBatch([1, 2, 3, 4, 5].map((n) => jobOf(sync, { account: 'a', n })));
    expect(await states()).toEqual({ 1: 'free', 2: 'free', 3: 'held', 4: 'held', 5: 'held' });
    expect(await db.sluice.queues.groups('q')).toMatchObject([
      { group: 'account-a', concurrency: null, effectiveLimit: 2, active: 2 },
    ]);
    expect(await db.sluice.queues.setGroupLimits('q', 'account-a', { concurrency: 4 })).toBe(2);
    expect(await states()).toEqual({ 1: 'free', 2: 'free', 3: 'free', 4: 'free', 5: 'held' });
    // A single enqueue takes the same path.
    await db.sluice.enqueue(jobOf(sync, { account: 'b', n: 6 }));
    expect((await states())['6']).toBe('free');
    expect(await group('q', 'account-b')).toEqual({ limit: null, active: 1 });
  });

  it('reconcile recounts a corrupted count and releases what it has room for', async () => {
    await db.sluice.enqueueBatch(
      [1, 2, 3].map((n) => ({ name: 'r', payload: { n }, group: 'g', groupLimits: { concurrency: 1 } })),
    );
    await db.query("UPDATE sluice_job_groups SET active = 7 WHERE group_key = 'g'");
    const task = reconcileGroups({ db: fromKnex(db.sluice.knex), tables: tablesFor('sluice_') }, { quietMs: 0 });
    expect(await task.runOnce()).toEqual({ recounted: 1, released: 0 });
    expect(await group('default', 'g')).toEqual({ limit: 1, active: 1 });
    // A slot lost the other way (the job deleted around sluice): the recount gives it back.
    const [free] = await db.query<{ id: number }>(`SELECT id FROM sluice_jobs WHERE run_at <> '${HELD}'`);
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [free?.id]);
    expect(await task.runOnce()).toEqual({ recounted: 1, released: 1 });
    expect(await states()).toEqual({ 2: 'free', 3: 'held' });
    expect(await group('default', 'g')).toEqual({ limit: 1, active: 1 });
  });

  it('a batch in an app transaction that rolls back leaves no group change', async () => {
    await db.sluice.enqueue({ name: 'x', group: 'g', groupLimits: { concurrency: 1 } });
    const before = await group('default', 'g');
    await expect(
      db.sluice.knex.transaction(async (trx) => {
        await db.sluice.enqueueBatch(
          [1, 2].map((n) => ({ name: 'x', payload: { n }, group: 'g', groupLimits: { concurrency: 5 } })),
          { trx },
        );
        throw new Error('app rollback');
      }),
    ).rejects.toThrow('app rollback');
    expect(await group('default', 'g')).toEqual(before);
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
    expect(await countRows(db, 'sluice_job_holds')).toBe(0);
  });

  it('refuses a bad group or limit, naming the job and field, and writes nothing', async () => {
    const bad = [
      [{ name: 'x', group: '' }, 'group'],
      [{ name: 'x', group: 'x'.repeat(192) }, 'group'],
      [{ name: 'x', group: 7 as unknown as string }, 'group'],
      [{ name: 'x', groupLimits: { concurrency: 1 } }, 'groupLimits'],
      [{ name: 'x', group: 'g', groupLimits: { concurrency: 0 } }, 'groupLimits.concurrency'],
      [{ name: 'x', group: 'g', groupLimits: { concurrency: 1.5 } }, 'groupLimits.concurrency'],
      [{ name: 'x', group: 'g', groupLimits: { rate: 1 } as never }, 'groupLimits.rate'],
    ] as const;
    for (const [spec, field] of bad) {
      const error = await db.sluice
        .enqueueBatch([{ name: 'ok', group: 'g', groupLimits: { concurrency: 1 } }, spec])
        .catch((e) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 1, field });
    }
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_job_groups')).toBe(0);
    await expect(db.sluice.queues.setGroupLimits('q', 'g', { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(db.sluice.queues.setLimits('q', { groupConcurrency: -1 })).rejects.toThrow(/groupConcurrency/);
  });
});
