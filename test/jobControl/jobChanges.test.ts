import { describe, expect, it } from 'vitest';
import { defineJob, PermanentJobError } from '../../src/index.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Watching from another process": `sluice.jobs.changes({ after })` returns what
 * completed, was cancelled or died since a cursor, oldest first, each change once across polls.
 */
const db = useTestDatabase('jobs_changes');

describe('jobs.changes', () => {
  it('reports each completion, cancel and death once, in order, across polls', async () => {
    const watcher = db.open();
    let { cursor } = await watcher.jobs.changes({ settleMs: 0 });
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const bad = defineJob({
      name: 'bad',
      handle() {
        throw new PermanentJobError('no');
      },
    });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await sluice.enqueue({ name: 'ok', queue: 'c' })).id);
    const { id: badId } = await sluice.enqueue({ name: 'bad', queue: 'c' });
    const cancelled = await insertJob(db, { queue: 'c', name: 'ok' });
    await sluice.jobs.cancel(cancelled);
    await withWorker(sluice, [ok, bad], { queues: ['c'] }, () =>
      waitFor(() => events['job:completed'].length === 5 && events['job:dead'].length === 1, { what: 'all done' }),
    );
    const seen: { id: number; state: string; at: number }[] = [];
    for (let polls = 0; polls < 20 && seen.length < 7; polls++) {
      const page = await watcher.jobs.changes({ after: cursor, limit: 2, settleMs: 0 });
      seen.push(...page.changes.map((c) => ({ id: c.id, state: c.state, at: c.at.getTime() })));
      cursor = page.cursor;
    }
    expect(seen.map((c) => c.id).sort((a, b) => a - b)).toEqual([...ids, badId, cancelled].sort((a, b) => a - b));
    expect(seen.map((c) => c.at)).toEqual(seen.map((c) => c.at).sort((a, b) => a - b));
    expect(seen.find((c) => c.id === badId)?.state).toBe('dead');
    expect(seen.find((c) => c.id === cancelled)?.state).toBe('cancelled');
    expect((await watcher.jobs.changes({ after: cursor, settleMs: 0 })).changes).toEqual([]);
  });

  it('holds back changes younger than the settle time', async () => {
    const { cursor } = await db.sluice.jobs.changes({ settleMs: 0 });
    const id = await insertJob(db, {});
    await db.sluice.jobs.cancel(id);
    expect((await db.sluice.jobs.changes({ after: cursor, settleMs: 60_000 })).changes).toEqual([]);
    expect((await db.sluice.jobs.changes({ after: cursor, settleMs: 0 })).changes).toEqual([
      expect.objectContaining({ id, state: 'cancelled', queue: 'default', name: 'work', at: expect.any(Date) }),
    ]);
  });
});
