import { describe, expect, it } from 'vitest';
import { defineJob, OptionsError } from '../../src/index.ts';
import { ago, fromNow, HOUR, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { msUntilRunAt, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Run now, retry now, reschedule": a delayed job made due now runs; retry now ends a
 * failed job's backoff; reschedule moves a free job; a running or finished job is never touched.
 */
const db = useTestDatabase('jobs_run_now');

describe('jobs.runNow / retryNow / reschedule', () => {
  it('makes a delayed job due now, and a worker runs it', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const { id } = await sluice.enqueue({ name: 'later', queue: 'rn', delayMs: HOUR });
    expect((await sluice.jobs.get(id))?.state).toBe('delayed');
    expect(await sluice.jobs.runNow(id)).toBe(1);
    expect((await sluice.jobs.get(id))?.state).toBe('waiting');
    const later = defineJob({ name: 'later', handle: () => 'ran' });
    await withWorker(sluice, [later], { queues: ['rn'] }, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'completed' }),
    );
    expect(await sluice.jobs.waitFor(id)).toBe('ran');
  });

  it('leaves a running job, a due job’s place in line, and a finished job alone', async () => {
    const running = await insertJob(db, { lockId: 'h-1~aa.1', runAt: fromNow(HOUR) });
    const due = await insertJob(db, { runAt: ago(HOUR) });
    const before = await msUntilRunAt(db, due);
    expect(await db.sluice.jobs.runNow([running, due, 424_242])).toBe(0);
    expect(await msUntilRunAt(db, running)).toBeGreaterThan(50 * MINUTE);
    expect(Math.round(await msUntilRunAt(db, due))).toBeLessThanOrEqual(Math.round(before));
  });

  it('retry now ends only a failed job’s backoff', async () => {
    const retrying = await insertJob(db, { runAt: fromNow(HOUR), retryTimes: 2 });
    const delayed = await insertJob(db, { runAt: fromNow(HOUR) });
    expect(await db.sluice.jobs.retryNow([retrying, delayed])).toBe(1);
    expect((await db.sluice.jobs.get(retrying))?.state).toBe('waiting');
    expect((await db.sluice.jobs.get(delayed))?.state).toBe('delayed');
  });

  it('reschedules free jobs on the DB clock or to a time, never a running one', async () => {
    const free = await insertJob(db, {});
    const running = await insertJob(db, { lockId: 'h-1~aa.2' });
    expect(await db.sluice.jobs.reschedule([free, running], { delayMs: 2 * HOUR })).toBe(1);
    expect(await msUntilRunAt(db, free)).toBeGreaterThan(HOUR);
    expect((await db.sluice.jobs.get(free))?.state).toBe('delayed');
    const at = new Date(Date.now() - MINUTE);
    expect(await db.sluice.jobs.reschedule(free, { runAt: at })).toBe(1);
    expect((await db.sluice.jobs.get(free))?.runAt?.getTime()).toBe(at.getTime());
    await expect(db.sluice.jobs.reschedule(free, { delayMs: -1 })).rejects.toBeInstanceOf(OptionsError);
    await expect(db.sluice.jobs.runNow(0)).rejects.toBeInstanceOf(OptionsError);
  });
});
