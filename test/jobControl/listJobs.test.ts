import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.ts';
import { encodeCursor } from '../../src/jobControl/jobCursor.ts';
import { ago, fromNow, HOUR, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * README "Jobs": `sluice.jobs.list(filter, page)` pages by keyset (`next` → `after`) through
 * every state, queue, name, batch and time range; no page repeats or skips a job, and a filter
 * the index cannot serve reads a bounded window per page. `count` is capped.
 */
const db = useTestDatabase('jobs_list');

/** Every job of a listing, walking all its pages. */
async function walk(filter: Parameters<typeof db.sluice.jobs.list>[0], limit: number, scanLimit?: number) {
  const ids: number[] = [];
  const sizes: number[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await db.sluice.jobs.list(filter, { limit, after, scanLimit });
    ids.push(...page.jobs.map((j) => j.id));
    sizes.push(page.jobs.length);
    if (page.next === null) return { ids, sizes };
    after = page.next;
  }
  throw new Error('listing did not end');
}

describe('jobs.list', () => {
  it('walks a queue in claim order (priority, run_at, id), then its running jobs, with no repeat or gap', async () => {
    const p1old = await insertJob(db, { queue: 'q', priority: 1, runAt: ago(HOUR) });
    const p0late = await insertJob(db, { queue: 'q', priority: 0, runAt: fromNow(HOUR) });
    const p0a = await insertJob(db, { queue: 'q', priority: 0, runAt: ago(MINUTE) });
    const p0b = await insertJob(db, { queue: 'q', priority: 0, runAt: ago(MINUTE) });
    const pNeg = await insertJob(db, { queue: 'q', priority: -5, runAt: ago(1) });
    const run2 = await insertJob(db, { queue: 'q', lockId: 'h-1~aa.2' });
    const run1 = await insertJob(db, { queue: 'q', lockId: 'h-1~aa.1' });
    await insertJob(db, { queue: 'other' });
    const expected = [pNeg, p0a, p0b, p0late, p1old, run1, run2];
    for (const limit of [1, 2, 3, 7, 50]) {
      expect((await walk({ queue: 'q' }, limit)).ids, `limit ${limit}`).toEqual(expected);
    }
    const [first] = (await db.sluice.jobs.list({ queue: 'q' }, { limit: 1 })).jobs;
    expect(first).toMatchObject({ id: pNeg, state: 'waiting', queue: 'q', priority: -5, lockId: null });
    const running = (await db.sluice.jobs.list({ queue: 'q', state: 'running' })).jobs;
    expect(running.map((j) => [j.id, j.state, j.lockId])).toEqual([
      [run1, 'running', 'h-1~aa.1'],
      [run2, 'running', 'h-1~aa.2'],
    ]);
  });

  it('tells the states apart, in every queue when none is named', async () => {
    const waiting = [await insertJob(db, { queue: 'a' }), await insertJob(db, { queue: 'b', retryTimes: 2 })];
    const delayed = [await insertJob(db, { queue: 'a', runAt: fromNow(HOUR) })];
    const retrying = [
      await insertJob(db, { queue: 'b', runAt: fromNow(HOUR), retryTimes: 1 }),
      await insertJob(db, { queue: 'c', runAt: fromNow(MINUTE), retryTimes: 3 }),
    ];
    const running = [await insertJob(db, { queue: 'c', lockId: 'h-2~bb.1' })];
    const byState = async (state: 'waiting' | 'delayed' | 'retrying' | 'running') =>
      (await walk({ state }, 1)).ids.sort((x, y) => x - y);
    expect(await byState('waiting')).toEqual(waiting);
    expect(await byState('delayed')).toEqual(delayed);
    expect(await byState('retrying')).toEqual(retrying);
    expect(await byState('running')).toEqual(running);
    expect((await walk({}, 2)).ids.sort((x, y) => x - y)).toEqual(
      [...waiting, ...delayed, ...retrying, ...running].sort((x, y) => x - y),
    );
    expect(await db.sluice.jobs.count({ state: 'retrying' })).toEqual({ count: 2, exact: true });
    expect(await db.sluice.jobs.count({})).toEqual({ count: 6, exact: true });
  });

  it('filters by name within a bounded scan per page: short pages, then the rest, never a repeat', async () => {
    const wanted: number[] = [];
    for (let i = 0; i < 60; i++) {
      const id = await insertJob(db, { queue: 'n', name: i % 10 === 0 ? 'rare' : 'common' });
      if (i % 10 === 0) wanted.push(id);
    }
    const { ids, sizes } = await walk({ queue: 'n', name: 'rare' }, 5, 15);
    expect(ids).toEqual(wanted);
    // No page read more than 15 entries, so pages came back short (some empty) with a cursor to go on.
    expect(sizes.length).toBeGreaterThan(2);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(2);
    expect(await db.sluice.jobs.count({ queue: 'n', name: 'rare' })).toEqual({ count: 6, exact: true });
    expect(await db.sluice.jobs.count({ queue: 'n', name: 'rare' }, { max: 20 })).toEqual({ count: 2, exact: false });
    expect(await db.sluice.jobs.count({ queue: 'n' }, { max: 20 })).toEqual({ count: 20, exact: false });
  });

  it('lists a batch, and finished jobs newest first, by outcome, queue and time', async () => {
    const { batchId } = await db.sluice.enqueueBatch([{ name: 'a' }, { name: 'b', queue: 'x' }, { name: 'c' }]);
    const inBatch = (await walk({ batchId: batchId as number }, 2)).ids;
    expect(inBatch).toHaveLength(3);
    expect((await walk({ batchId: batchId as number, queue: 'x' }, 2)).ids).toEqual([inBatch[1]]);

    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at, outcome)
       VALUES (101, 'h', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 3 HOUR, 'completed'),
              (102, 'h', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 2 HOUR, 'cancelled'),
              (103, 'k', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 1 HOUR, 'completed'),
              (104, 'h', 'n', '{}', 0, NOW(3), NOW(3) - INTERVAL 1 HOUR, 'completed')`,
    );
    expect((await walk({ state: 'completed' }, 1)).ids).toEqual([104, 103, 101]);
    expect((await walk({ state: 'completed', queue: 'h' }, 1)).ids).toEqual([104, 101]);
    expect((await walk({ state: 'cancelled' }, 1)).ids).toEqual([102]);
    const twoHoursAgo = new Date(Date.now() - 2.5 * 3_600_000);
    expect((await walk({ state: 'completed', from: twoHoursAgo }, 1)).ids).toEqual([104, 103]);
    expect((await walk({ state: 'completed', to: twoHoursAgo }, 1)).ids).toEqual([101]);
    const [completed] = (await db.sluice.jobs.list({ state: 'completed' }, { limit: 1 })).jobs;
    expect(completed).toMatchObject({ id: 104, state: 'completed', finishedAt: expect.any(Date), runAt: null });
  });

  it('lists dead jobs newest first, leaving re-driven ones out', async () => {
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at, redriven_at)
       VALUES (201, 'd', 'n', '{}', 0, 4, 'Error: one\\n  at x', NOW(3), NOW(3) - INTERVAL 2 HOUR, NULL),
              (202, 'e', 'n', '{}', 0, 4, 'Error: two', NOW(3), NOW(3) - INTERVAL 1 HOUR, NULL),
              (203, 'd', 'n', '{}', 0, 4, 'Error: three', NOW(3), NOW(3), NOW(3))`,
    );
    expect((await walk({ state: 'dead' }, 1)).ids).toEqual([202, 201]);
    expect((await walk({ state: 'dead', queue: 'd' }, 1)).ids).toEqual([201]);
    const [one] = (await db.sluice.jobs.list({ state: 'dead', queue: 'd' })).jobs;
    expect(one).toMatchObject({ state: 'dead', error: 'Error: one', retryTimes: 4 });
  });

  it('refuses a bad filter, page or cursor with OptionsError', async () => {
    const list = db.sluice.jobs.list;
    await expect(list({ state: 'sleeping' as never })).rejects.toBeInstanceOf(OptionsError);
    await expect(list({ queue: '' })).rejects.toBeInstanceOf(OptionsError);
    await expect(list({ batch: 1 } as never)).rejects.toThrow(/batch is not an option of sluice.jobs.list\(filter\)/);
    await expect(list({}, { limit: 0 })).rejects.toBeInstanceOf(OptionsError);
    await expect(list({}, { after: 'not-a-cursor' })).rejects.toBeInstanceOf(OptionsError);
  });

  it('refuses a cursor edited by hand (its segment or key) with OptionsError naming after, before any SQL', async () => {
    await insertJob(db, { queue: 'q', priority: 1 });
    const { next } = await db.sluice.jobs.list({}, { limit: 1, scanLimit: 1 });
    expect(next).not.toBeNull();
    const tampered = [
      // A priority that is not a number (was: "Unknown column 'NaN'" from the server).
      encodeCursor({ segment: ['q', 'f', 'x'], key: [] }),
      // Nine key values for a two-column key (was: "Expected 3 bindings, saw 9").
      encodeCursor({ segment: ['q', 'f', 1], key: [1, 2, 3, 4, 5, 6, 7, 8, 9] }),
      // A text where a time goes, a queue name no queue can have, a segment of another table.
      encodeCursor({ segment: ['q', 'f', 1], key: ['yesterday', 1] }),
      encodeCursor({ segment: ['a b', 'r'], key: [] }),
      encodeCursor({ segment: ['h'], key: [] }),
      Buffer.from('{"s":["q","f",1],"k":[{"t":1e300},1]}').toString('base64url'),
    ];
    for (const after of tampered) {
      const failure = await db.sluice.jobs.list({}, { after }).catch((e: unknown) => e);
      expect(failure, after).toBeInstanceOf(OptionsError);
      expect((failure as OptionsError).option).toBe('after');
      expect((failure as Error).message).toMatch(/option after is not a cursor of this listing/);
    }
    await expect(db.sluice.jobs.changes({ after: tampered[1] as string })).rejects.toThrow(/option after/);
  });
});
