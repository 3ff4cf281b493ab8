import { beforeAll, describe, expect, it } from 'vitest';
import { defineJob, JobCancelledError, OptionsError } from '../../src/index.ts';
import { ago, countRows, fromNow, HOUR, insertJob, jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Cancelling": a waiting, delayed or retrying job is removed at once and kept in the
 * history as cancelled (not dead, never retried); a running job's worker learns of it at its next
 * heartbeat, aborts ctx.signal with JobCancelledError, and the job ends as cancelled whatever the
 * handler does next (an exactly-once handler's writes roll back). By id or by filter, in bounded
 * batches; a cancelled batch still gets its completion job, once, with the counts.
 */
const db = useTestDatabase('jobs_cancel');

beforeAll(async () => {
  await db.query(`CREATE TABLE IF NOT EXISTS app_effects (
    id     BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_id BIGINT UNSIGNED NOT NULL
  ) ENGINE=InnoDB`);
});

async function historyRow(id: number) {
  const [row] = await db.query<{ outcome: string; result: string | null }>(
    'SELECT outcome, result FROM sluice_job_history WHERE job_id = ?',
    [id],
  );
  return row;
}

describe('cancelling jobs that do not run', () => {
  it('moves a waiting, a delayed and a retrying job to the history as cancelled; nothing else moves', async () => {
    const waiting = await insertJob(db, { runAt: ago(1) });
    const delayed = await insertJob(db, { runAt: fromNow(HOUR) });
    const retrying = await insertJob(db, { runAt: fromNow(HOUR), retryTimes: 1, lastError: 'Error: first' });
    const untouched = await insertJob(db, {});
    expect(await db.sluice.jobs.cancel([waiting, delayed, retrying, 999_999])).toEqual({ cancelled: 3 });
    for (const id of [waiting, delayed, retrying]) {
      expect(await jobRow(db, id)).toBeUndefined();
      expect(await historyRow(id)).toEqual({ outcome: 'cancelled', result: null });
      expect(await db.sluice.jobs.get(id)).toMatchObject({ state: 'cancelled', finishedAt: expect.any(Date) });
    }
    expect((await db.sluice.jobs.get(retrying))?.lastError).toBe('Error: first');
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    expect(await db.sluice.jobs.get(untouched)).toMatchObject({ state: 'waiting' });
    // Cancelling again, or a job that is not live, changes nothing.
    expect(await db.sluice.jobs.cancel(waiting)).toEqual({ cancelled: 0 });
  });

  it('is never run by a worker afterwards', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ran: number[] = [];
    const work = defineJob({ name: 'work', handle: (_p, ctx) => void ran.push(ctx.job.id) });
    const { id: cancelled } = await sluice.enqueue({ name: 'work', queue: 'c' });
    const { id: kept } = await sluice.enqueue({ name: 'work', queue: 'c' });
    await sluice.jobs.cancel(cancelled);
    await withWorker(sluice, [work], { queues: ['c'] }, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'the kept job completed' }),
    );
    expect(ran).toEqual([kept]);
  });

  it('cancels by filter (queue and name) in bounded batches, leaving the rest', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push(await insertJob(db, { queue: 'f', name: 'spam', runAt: fromNow(i * 1000) }));
    const other = await insertJob(db, { queue: 'f', name: 'ham' });
    const elsewhere = await insertJob(db, { queue: 'g', name: 'spam' });
    const progress: number[] = [];
    const result = await db.sluice.jobs.cancel(
      { queue: 'f', name: 'spam' },
      { batchSize: 3, onProgress: (n) => progress.push(n) },
    );
    expect(result).toEqual({ cancelled: 7 });
    expect(progress).toEqual([3, 6, 7]);
    expect(await countRows(db, 'sluice_jobs')).toBe(2);
    expect((await db.sluice.jobs.get(other))?.state).toBe('waiting');
    expect((await db.sluice.jobs.get(elsewhere))?.state).toBe('waiting');
    await expect(db.sluice.jobs.cancel({ state: 'completed' })).rejects.toBeInstanceOf(OptionsError);
    await expect(db.sluice.jobs.cancel({})).rejects.toThrow(/names no field/);
    expect(await countRows(db, 'sluice_jobs')).toBe(2);
  });

  it('keeps a cancelled job’s idempotency key for the retention, like any finished job', async () => {
    const { id } = await db.sluice.enqueue({ name: 'once', idempotencyKey: 'order-9' });
    await db.sluice.jobs.cancel(id);
    expect(await db.sluice.enqueue({ name: 'once', idempotencyKey: 'order-9' })).toEqual({ id, duplicate: true });
  });

  it('cancels the rest of a batch, which then finishes once with the counts (succeeded, dead, cancelled)', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const bad = defineJob({
      name: 'bad',
      maxRetries: 0,
      handle() {
        throw new Error('always');
      },
    });
    const { batchId } = await sluice.enqueueBatch(
      [
        { name: 'ok', queue: 'run' },
        { name: 'ok', queue: 'run' },
        { name: 'bad', queue: 'run' },
        { name: 'later', queue: 'parked' },
        { name: 'later', queue: 'parked', delayMs: HOUR },
      ],
      { onComplete: { name: 'report', queue: 'reports' } },
    );
    const id = batchId as number;
    await withWorker(sluice, [ok, bad], { queues: ['run'] }, () =>
      waitFor(() => events['job:completed'].length === 2 && events['job:dead'].length === 1, { what: '3 finished' }),
    );
    const maintenance = sluice.maintenance({ jitterMs: 0 });
    expect((await maintenance.runOnce()).tasks.finishBatches).toEqual({ batches: 0 });
    expect(await sluice.jobs.cancel({ batchId: id })).toEqual({ cancelled: 2 });
    expect(await sluice.batches.get(id)).toMatchObject({ size: 5, pending: 0, succeeded: 2, dead: 1, cancelled: 2 });
    expect((await maintenance.runOnce()).tasks.finishBatches).toEqual({ batches: 1 });
    expect((await maintenance.runOnce()).tasks.finishBatches).toEqual({ batches: 0 });
    const reports = await db.query<{ payload: string }>("SELECT payload FROM sluice_jobs WHERE name = 'report'");
    expect(reports.map((r) => JSON.parse(r.payload))).toEqual([
      { batch: { id, size: 5, succeeded: 2, dead: 1, cancelled: 2 } },
    ]);
  });
});

describe('cancelling a running job (in-process worker)', () => {
  it('aborts ctx.signal with JobCancelledError at the next heartbeat; the job ends cancelled although the handler returns normally', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    const reasons: unknown[] = [];
    let runs = 0;
    const stubborn = defineJob({
      name: 'stubborn',
      async handle(_payload, ctx) {
        runs++;
        started.resolve();
        await aborted(ctx.signal);
        reasons.push(ctx.signal.reason);
        return { finished: 'anyway' }; // whatever the handler does next
      },
    });
    const { id } = await sluice.enqueue({ name: 'stubborn', queue: 'r' });
    await withWorker(sluice, [stubborn], { queues: ['r'], heartbeatIntervalMs: 100 }, async () => {
      await started.promise;
      expect(await sluice.jobs.cancel(id)).toEqual({ cancelled: 1 });
      await waitFor(() => events['job:cancelled'].length === 1, { what: 'job:cancelled' });
    });
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(JobCancelledError);
    expect(reasons[0]).toMatchObject({ code: 'SLUICE_JOB_CANCELLED', jobId: id });
    expect(events['job:cancelled']).toEqual([expect.objectContaining({ jobId: id, name: 'stubborn', queue: 'r' })]);
    expect(events['job:completed']).toEqual([]);
    expect(events['claim:lost']).toEqual([]);
    expect(await historyRow(id)).toEqual({ outcome: 'cancelled', result: null });
    expect(runs).toBe(1);
  });

  it('rolls an exactly-once handler’s writes back', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    const charge = defineJob({
      name: 'charge',
      delivery: 'exactly-once',
      async handle(_payload, ctx) {
        await ctx.trx?.('app_effects').insert({ job_id: ctx.job.id });
        started.resolve();
        await aborted(ctx.signal);
        return 'charged';
      },
    });
    const { id } = await sluice.enqueue({ name: 'charge', queue: 'x' });
    await withWorker(sluice, [charge], { queues: ['x'], heartbeatIntervalMs: 100 }, async () => {
      await started.promise;
      await sluice.jobs.cancel(id);
      await waitFor(() => events['job:cancelled'].length === 1, { what: 'job:cancelled' });
    });
    expect(await countRows(db, 'app_effects')).toBe(0);
    expect(await historyRow(id)).toEqual({ outcome: 'cancelled', result: null });
    expect(events['job:completed']).toEqual([]);
  });

  it('without history, a cancelled running job stops as a lost claim and is gone', async () => {
    const sluice = db.open({ historyRetentionMs: 0 });
    const events = recordEvents(sluice);
    const started = deferred();
    const job = defineJob({
      name: 'quiet',
      async handle(_payload, ctx) {
        started.resolve();
        await aborted(ctx.signal);
      },
    });
    const { id } = await sluice.enqueue({ name: 'quiet', queue: 'n' });
    await withWorker(sluice, [job], { queues: ['n'], heartbeatIntervalMs: 100 }, async () => {
      await started.promise;
      expect(await sluice.jobs.cancel(id)).toEqual({ cancelled: 1 });
      await waitFor(() => events['claim:lost'].some((e) => e.operation === 'extend'), { what: 'claim:lost' });
    });
    expect(await sluice.jobs.get(id)).toBeNull();
    expect(events['job:completed']).toEqual([]);
    expect(events['job:cancelled']).toEqual([]);
  });
});
