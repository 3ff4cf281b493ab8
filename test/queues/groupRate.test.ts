import { describe, expect, it } from 'vitest';
import { limitFlags } from '../../src/cli/limitFlags.ts';
import { JobValidationError, OptionsError } from '../../src/index.ts';
import { pruneGroupMembers } from '../../src/queues/pruneGroupMembers.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { countGroupStarts } from '../../src/worker/claims/countGroupStarts.ts';
import { retryJob } from '../../src/worker/claims/retryJob.ts';
import { snoozeJob } from '../../src/worker/claims/snoozeJob.ts';
import { countRows, NO_CLAIM, operationsOf } from '../helpers/factory.ts';
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

/**
 * The claim's side: a job of a rated group is flagged at enqueue, and its claim counts its start in
 * the group's current window before it runs. Windows of a day here, so that no window ends during a
 * test: a due backlog of several windows (jobs reserved from three days back, as when the fleet was
 * down) starts `limit` per window, whatever was due.
 */
describe("a rated group's starts, counted at claim", () => {
  const DAY = 86_400_000;
  const tokens = new ClaimTokens();
  const claim = async (queue: string, want = 50) => {
    const { exec, tables } = operationsOf(db);
    const lockId = tokens.next();
    const rows = await claimRandomHead(exec, tables, { queue, priorities: [0], want, lockId, headSize: 100 });
    return { lockId, rows, exec, tables };
  };
  const backlog = (queue: string, group: string, n: number) =>
    db.sluice.enqueueBatch(
      Array.from({ length: n }, (_, i) => ({
        name: 'n',
        queue,
        group,
        groupLimits: { rate: { limit: 2, intervalMs: DAY } },
        runAt: new Date(Date.now() - 3 * DAY),
        payload: { i },
      })),
    );

  it('starts at most `limit` per window of a due backlog; the rest go back unclaimed, no attempt counted', async () => {
    await backlog('api', 'acme', 6);
    // Reserved two a day from three days back: all six are due now (the fault of an enqueue-time bound).
    expect(await due('acme')).toBe(6);
    const { lockId, rows, exec, tables } = await claim('api');
    expect(rows).toHaveLength(6);
    const starting = await countGroupStarts(exec, tables, lockId, rows);
    expect(starting).toHaveLength(2);
    // The four others: free, not retried, and due no sooner than the next window (after its reservations).
    const back = await db.query<{ lock_id: string; locked_at: Date; retry_times: number; run_at: Date }>(
      'SELECT lock_id, locked_at, retry_times, run_at FROM sluice_jobs WHERE lock_id = ?',
      [''],
    );
    expect(back).toHaveLength(4);
    const nextWindow = (Math.floor(Date.now() / DAY) + 1) * DAY;
    for (const row of back) {
      expect(row).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 0 });
      expect(row.run_at.getTime()).toBeGreaterThanOrEqual(nextWindow);
    }
    expect(await perWindow('acme', DAY)).toEqual([2, 2, 2]);
    // A second claim in the window finds none of them due.
    expect((await claim('api')).rows).toEqual([]);
  });

  it('bounds a retried job as well: its retry counts against the window it starts in', async () => {
    await backlog('api', 'retried', 2);
    const first = await claim('api');
    const started = await countGroupStarts(first.exec, first.tables, first.lockId, first.rows);
    expect(started).toHaveLength(2);
    const failed = Number(started[0]?.id);
    await retryJob(first.exec, first.tables, { id: failed, lockId: first.lockId }, 0, 'boom');
    const again = await claim('api');
    expect(again.rows.map((r) => Number(r.id))).toEqual([failed]);
    expect(await countGroupStarts(again.exec, again.tables, again.lockId, again.rows)).toEqual([]);
    const [row] = await db.query<{ retry_times: number; run_at: Date }>(
      'SELECT retry_times, run_at FROM sluice_jobs WHERE id = ?',
      [failed],
    );
    expect(row?.retry_times).toBe(1); // its failure, not the deferral
    expect(row?.run_at.getTime()).toBeGreaterThanOrEqual((Math.floor(Date.now() / DAY) + 1) * DAY);
  });

  it('gives back a job claimed while a handler paused its group, past the pause', async () => {
    await backlog('api', 'paused', 2);
    const both = await claim('api');
    expect(both.rows).toHaveLength(2);
    const [a, b] = both.rows.map((r) => Number(r.id)) as [number, number];
    // a's handler hits the partner's wall and pauses the group; b, claimed beside it, has not started.
    await snoozeJob(both.exec, both.tables, { id: a, queue: 'api', lockId: both.lockId }, 60_000, {
      queue: false,
      group: true,
    });
    const bRow = both.rows.filter((r) => Number(r.id) === b);
    expect(await countGroupStarts(both.exec, both.tables, both.lockId, bRow)).toEqual([]);
    const [row] = await db.query<{ lock_id: string; past_pause: number }>(
      `SELECT j.lock_id, j.run_at >= g.paused_until AS past_pause
       FROM sluice_jobs j JOIN sluice_job_groups g ON g.queue = j.queue AND g.group_key = j.group_key
       WHERE j.id = ?`,
      [b],
    );
    expect(row).toEqual({ lock_id: '', past_pause: 1 });
  });

  it('flags only jobs of rated groups: others are claimed as before', async () => {
    await db.sluice.enqueueBatch([
      { name: 'n', queue: 'mixed', group: 'free' },
      { name: 'n', queue: 'mixed' },
      { name: 'n', queue: 'mixed', group: 'r', groupLimits: { rate: { limit: 1, intervalMs: DAY } } },
    ]);
    const flags = await db.query<{ group_key: string | null; flags: number }>(
      'SELECT group_key, flags FROM sluice_jobs ORDER BY id',
    );
    expect(flags).toEqual([
      { group_key: 'free', flags: 0 },
      { group_key: null, flags: 0 },
      { group_key: 'r', flags: 8 },
    ]);
  });
});
