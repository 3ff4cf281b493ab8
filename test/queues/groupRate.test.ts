import { describe, expect, it } from 'vitest';
import { limitFlags } from '../../src/cli/limitFlags.ts';
import { JobValidationError, OptionsError } from '../../src/index.ts';
import { pruneGroupMembers } from '../../src/queues/pruneGroupMembers.ts';
import { countRows, operationsOf } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/flow-control.md "Per-group rate limits": a group's rate is reserved at enqueue. Each job of
 * a rate-limited group gets the first window with room as its run_at, so a backlog of the group
 * waits as future jobs, spread window by window; jobs of other groups, and jobs without a group,
 * keep their own run_at (and a job without a group touches no group row).
 */
const db = useTestDatabase('group_rate');
const MINUTE = 60_000;

/** Jobs per rate window (epoch ms ÷ interval, on the DB's clock), in window order, for one group. */
async function perWindow(group: string | null, intervalMs = MINUTE): Promise<number[]> {
  const rows = await db.query<{ w: number; n: number }>(
    `SELECT FLOOR(UNIX_TIMESTAMP(run_at) * 1000 / ?) AS w, COUNT(*) AS n
     FROM sluice_jobs WHERE group_key <=> ? GROUP BY w ORDER BY w`,
    [intervalMs, group],
  );
  return rows.map((r) => Number(r.n));
}

const due = async (group: string) =>
  Number(
    (
      await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs WHERE group_key = ? AND run_at <= NOW(3)', [
        group,
      ])
    )[0]?.n,
  );

describe('per-group rate limits', () => {
  it('spreads a batch of one group over windows of `limit` jobs; other groups and ungrouped jobs keep theirs', async () => {
    const rate = { limit: 10, intervalMs: MINUTE };
    const jobs = [
      ...Array.from({ length: 25 }, (_, i) => ({
        name: 'n',
        queue: 'api',
        group: 'acme',
        groupLimits: { rate },
        payload: { i },
      })),
      ...Array.from({ length: 3 }, () => ({ name: 'n', queue: 'api', group: 'other' })),
      ...Array.from({ length: 3 }, () => ({ name: 'n', queue: 'api' })),
    ];
    expect(await db.sluice.enqueueBatch(jobs)).toEqual({ batchId: expect.any(Number), count: 31, skipped: 0 });
    expect(await perWindow('acme')).toEqual([10, 10, 5]);
    expect(await due('acme')).toBeLessThanOrEqual(10);
    // No rate for 'other': due now. Ungrouped jobs: due now, no group_key.
    expect(await due('other')).toBe(3);
    expect(await perWindow(null)).toEqual([3]);
    // The cursor carries on: one more job of the group goes to the third window's free room.
    const { id } = await db.sluice.enqueue({ name: 'n', queue: 'api', group: 'acme' });
    expect(await perWindow('acme')).toEqual([10, 10, 6]);
    // jobs.get says why it waits: "rate limited: group acme, reserved start T".
    const job = await db.sluice.jobs.get(id);
    expect(job?.state).toBe('delayed');
    expect(job?.flowHold).toEqual({ reason: 'group-rate', group: 'acme', debounceKey: null, until: job?.runAt });
  });

  it("a queue's groupRate applies to each group without a rate of its own, and setGroupLimits overrides it", async () => {
    await db.sluice.queues.setLimits('tenants', { groupRate: { limit: 2, intervalMs: MINUTE } });
    await db.sluice.queues.setGroupLimits('tenants', 'big', { rate: { limit: 5, intervalMs: MINUTE } });
    const of = (group: string, n: number) => Array.from({ length: n }, () => ({ name: 'n', queue: 'tenants', group }));
    await db.sluice.enqueueBatch([...of('small', 5), ...of('big', 7)]);
    expect(await perWindow('small')).toEqual([2, 2, 1]);
    expect(await perWindow('big')).toEqual([5, 2]);
    expect((await db.sluice.queues.limits())[0]).toMatchObject({
      queue: 'tenants',
      groupRate: { limit: 2, intervalMs: MINUTE },
      blocked: null,
    });
    // A queue without a groupRate, and a group without a rate: nothing reserved.
    await db.sluice.enqueueBatch(of('small', 3).map((j) => ({ ...j, queue: 'free' })));
    expect(
      Number(
        (
          await db.query<{ n: number }>(
            "SELECT COUNT(*) AS n FROM sluice_jobs WHERE queue = 'free' AND run_at <= NOW(3)",
          )
        )[0]?.n,
      ),
    ).toBe(3);
  });

  it('the CLI takes --group-rate N/DURATION, and none removes it', () => {
    expect(limitFlags({ 'group-rate': '20/2s' })).toEqual({ groupRate: { limit: 20, intervalMs: 2_000 } });
    expect(limitFlags({ 'group-rate': 'none' })).toEqual({ groupRate: null });
    expect(() => limitFlags({ 'group-rate': 'fast' })).toThrow(/--group-rate/);
  });

  it('a job due later reserves from its own due time', async () => {
    const rate = { limit: 1, intervalMs: MINUTE };
    const runAt = new Date(Date.now() + 10 * MINUTE);
    const { id } = await db.sluice.enqueue({ name: 'n', queue: 'later', group: 'g', groupLimits: { rate }, runAt });
    const [row] = await db.query<{ run_at: Date }>('SELECT run_at FROM sluice_jobs WHERE id = ?', [id]);
    expect(row?.run_at.getTime()).toBe(runAt.getTime());
  });

  it('costs a job without a group nothing: no group row is read or written', async () => {
    await db.sluice.enqueue({ name: 'n', queue: 'plain' });
    await db.sluice.enqueueBatch([{ name: 'n', queue: 'plain' }]);
    expect(await countRows(db, 'sluice_job_groups')).toBe(0);
    expect(await countRows(db, 'sluice_job_group_members')).toBe(0);
  });

  it('records each grouped job as a member of its group until pruneGroupMembers sees it gone', async () => {
    const { id } = await db.sluice.enqueue({ name: 'n', queue: 'm', group: 'g' });
    const batch = await db.sluice.enqueueBatch([
      { name: 'n', queue: 'm', group: 'g' },
      { name: 'n', queue: 'm' },
      { name: 'n', queue: 'm', group: 'h' },
    ]);
    expect(batch.count).toBe(3);
    const members = await db.query<{ group_key: string }>(
      'SELECT group_key FROM sluice_job_group_members ORDER BY job_id',
    );
    expect(members.map((m) => m.group_key)).toEqual(['g', 'g', 'h']);
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [id]);
    const { exec, tables } = operationsOf(db);
    expect(await pruneGroupMembers({ db: exec, tables }).runOnce()).toEqual({ pruned: 1 });
    expect(await countRows(db, 'sluice_job_group_members')).toBe(2);
  });

  it('refuses bad groups and rates with a typed error naming the job and field, writing nothing', async () => {
    const bad: [unknown, string][] = [
      [{ name: 'n', group: '' }, 'group'],
      [{ name: 'n', group: 'x'.repeat(192) }, 'group'],
      [{ name: 'n', group: 7 }, 'group'],
      [{ name: 'n', groupLimits: { rate: { limit: 1, intervalMs: 1000 } } }, 'groupLimits'],
      [{ name: 'n', group: 'g', groupLimits: { rate: { limit: 0, intervalMs: 1000 } } }, 'groupLimits.rate.limit'],
      [{ name: 'n', group: 'g', groupLimits: { rate: { limit: 1, intervalMs: 0 } } }, 'groupLimits.rate.intervalMs'],
      [{ name: 'n', group: 'g', groupLimits: { rat: 1 } }, 'groupLimits.rat'],
    ];
    for (const [job, field] of bad) {
      const error = await db.sluice.enqueueBatch([{ name: 'ok' }, job as never]).catch((e: unknown) => e);
      expect(error, JSON.stringify(job)).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 1, field });
    }
    const limits = await db.sluice.queues
      .setLimits('q', { groupRate: { limit: 0, intervalMs: 5 } })
      .catch((e: unknown) => e);
    expect(limits).toBeInstanceOf(OptionsError);
    expect(limits).toMatchObject({ option: 'groupRate.limit' });
    await expect(db.sluice.queues.setGroupLimits('q', '', { rate: null })).rejects.toThrow(OptionsError);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_job_groups')).toBe(0);
  });
});
