import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { jobRow } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, deferred, openRecorded, withWorker } from '../helpers/workerHarness.ts';

/** A worker's claims: heartbeats extend them, and a claim lost meanwhile is fenced out of completion. */
const db = useTestDatabase('worker_claims');

describe('Worker', () => {
  it('heartbeats extend the claim of a long-running job', async () => {
    const { sluice } = openRecorded(db);
    const started = deferred();
    const gate = deferred();
    const long = defineJob({
      name: 'long',
      handle: async () => {
        started.resolve();
        await gate.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'long' });
    await withWorker(sluice, [long], { lockTimeoutMs: 30_000, heartbeatIntervalMs: 100 }, async () => {
      await started.promise;
      await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) - INTERVAL 1 HOUR WHERE id = ?', [id]);
      await waitFor(
        async () => {
          const [row] = await db.query<{ age: number }>(
            'SELECT TIMESTAMPDIFF(SECOND, locked_at, NOW(3)) AS age FROM sluice_jobs WHERE id = ?',
            [id],
          );
          return row !== undefined && Number(row.age) < 60;
        },
        { what: 'locked_at extended by a heartbeat' },
      );
      gate.resolve();
      await waitFor(async () => (await jobRow(db, id)) === undefined, { what: 'the job completed' });
    });
  });

  it('aborts a handler whose claim was swept, and its late completion cannot delete the next claim', async () => {
    const { sluice, events } = openRecorded(db);
    const attempts: { retryTimes: number; lockId: string; signal: AbortSignal }[] = [];
    const second = deferred();
    const job = defineJob({
      name: 'swept',
      handle: async (_payload, ctx) => {
        attempts.push({ retryTimes: ctx.job.retryTimes, lockId: ctx.job.lockId, signal: ctx.signal });
        if (ctx.job.retryTimes === 0) await aborted(ctx.signal);
        else await second.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'swept', maxRetries: 5 });
    await withWorker(sluice, [job], { lockTimeoutMs: 30_000, heartbeatIntervalMs: 100 }, async () => {
      await waitFor(() => attempts.length === 1, { what: 'the first attempt' });
      // What the sweeper does to an expired claim.
      await db.query(
        "UPDATE sluice_jobs SET lock_id = '', locked_at = DEFAULT, retry_times = retry_times + 1 WHERE id = ?",
        [id],
      );
      await waitFor(() => attempts.length === 2, { what: 'the second attempt' });
      await waitFor(() => attempts[0]?.signal.aborted, { what: 'the first attempt aborted by the heartbeat' });
      await waitFor(() => events['claim:lost'].some((e) => e.operation === 'complete'), {
        what: 'the late completion refused',
      });
      // The second claim still holds the job.
      expect(await jobRow(db, id)).toMatchObject({ lock_id: attempts[1]?.lockId, retry_times: 1 });
      second.resolve();
      await waitFor(async () => (await jobRow(db, id)) === undefined, { what: 'the second attempt completed' });
    });
    expect(attempts.map((a) => a.retryTimes)).toEqual([0, 1]);
    expect(attempts[0]?.lockId).not.toBe(attempts[1]?.lockId);
    expect(events['claim:lost'].map((e) => [e.operation, e.lockId])).toEqual(
      expect.arrayContaining([
        ['extend', attempts[0]?.lockId],
        ['complete', attempts[0]?.lockId],
      ]),
    );
    expect(events['job:completed'].map((e) => e.jobId)).toEqual([id]);
  });

  it('with history, one lost claim in a completion batch does not hold back its finished siblings', async () => {
    const { sluice, events } = openRecorded(db);
    const gate = deferred();
    const running: number[] = [];
    const job = defineJob({
      name: 'sibling',
      handle: async (_payload, ctx) => {
        running.push(ctx.job.id);
        await gate.promise;
      },
    });
    const { batchId } = await sluice.enqueueBatch([{ name: 'sibling' }, { name: 'sibling' }, { name: 'sibling' }]);
    const ids = (
      await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE batch_id = ? ORDER BY id', [batchId])
    ).map((r) => Number(r.id));
    const [first, stolen, third] = ids as [number, number, number];
    await withWorker(
      sluice,
      [job],
      { concurrency: 3, claimBatchSize: 3, lockTimeoutMs: 60_000, heartbeatIntervalMs: 20_000 },
      async () => {
        await waitFor(() => running.length === 3, { what: 'all three running under one claim' });
        expect(
          new Set((await db.query<{ lock_id: string }>('SELECT lock_id FROM sluice_jobs')).map((r) => r.lock_id)).size,
        ).toBe(1);
        // Swept and claimed by another worker while its handler ran.
        await db.query("UPDATE sluice_jobs SET lock_id = 'elsewhere-1~0.1', locked_at = NOW(3) WHERE id = ?", [stolen]);
        gate.resolve();
        await waitFor(() => events['claim:lost'].length === 1, { what: 'the lost claim reported' });
        await waitFor(() => events['job:completed'].length === 2, { what: 'the two siblings completed' });
      },
    );
    expect(events['claim:lost']).toEqual([
      expect.objectContaining({ operation: 'complete', jobIds: [stolen], lost: 1 }),
    ]);
    expect(events['job:completed'].map((e) => e.jobId).sort((a, b) => a - b)).toEqual([first, third]);
    expect(await jobRow(db, first)).toBeUndefined();
    expect(await jobRow(db, third)).toBeUndefined();
    expect(await jobRow(db, stolen)).toMatchObject({ lock_id: 'elsewhere-1~0.1' });
    const history = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_history ORDER BY job_id');
    expect(history.map((r) => Number(r.job_id))).toEqual([first, third]);
  });
});
