import { describe, expect, it } from 'vitest';
import {
  type Backoff,
  defineJob,
  HandlerTimeoutError,
  type JobSpec,
  JobValidationError,
  PermanentError,
  PermanentJobError,
  type StoredBackoff,
} from '../../src/index.ts';
import { ago, countRows, deadRow, insertJob, jobRow, NO_CLAIM, SECOND } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted, deferred, msUntilRunAt, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Retries, backoff, timeouts, heartbeats": backoff sets run_at on the DB clock (per job
 * over per definition over the worker default); PermanentJobError dead-letters at once;
 * timeoutMs aborts ctx.signal and fails the attempt; heartbeats keep a long job's claim while
 * its worker lives, and a dead worker's claim is released after lockTimeoutMs.
 */
const db = useTestDatabase('sem_retries');

/** Slack for the time between the retry's UPDATE and the test's read of run_at. */
const SLACK_MS = 5_000;

function expectDelay(ahead: number, delayMs: number): void {
  expect(ahead).toBeLessThanOrEqual(delayMs);
  expect(ahead).toBeGreaterThan(delayMs - SLACK_MS);
}

const failing = (name: string, backoff?: Backoff, maxRetries = 5) =>
  defineJob({
    name,
    maxRetries,
    ...(backoff ? { backoff } : {}),
    handle: () => {
      throw new Error(`${name} failed`);
    },
  });

describe('backoff', () => {
  it('fixed: each retry is due delayMs after the failure, on the DB clock', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const { id } = await sluice.enqueue({ name: 'fixed' });
    await withWorker(sluice, [failing('fixed', { type: 'fixed', delayMs: 90_000 })], {}, async () => {
      for (let retry = 1; retry <= 2; retry++) {
        await waitFor(() => events['job:retried'].length === retry, { what: `retry ${retry}` });
        expectDelay(await msUntilRunAt(db, id), 90_000);
        expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: retry });
        // Make it due now instead of waiting 90 s.
        await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?', [id]);
      }
      await waitFor(() => events['job:retried'].length === 3, { what: 'retry 3' });
    });
    expect(events['job:retried'].map((e) => [e.retryTimes, e.delayMs])).toEqual([
      [1, 90_000],
      [2, 90_000],
      [3, 90_000],
    ]);
  });

  it('exponential: doubles from delayMs per retry, capped at maxDelayMs', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const { id } = await sluice.enqueue({ name: 'exp' });
    const backoff: StoredBackoff = { type: 'exponential', delayMs: 20_000, maxDelayMs: 50_000, jitter: 0 };
    const expected = [20_000, 40_000, 50_000];
    await withWorker(sluice, [failing('exp', backoff)], {}, async () => {
      for (let retry = 1; retry <= expected.length; retry++) {
        await waitFor(() => events['job:retried'].length === retry, { what: `retry ${retry}` });
        expectDelay(await msUntilRunAt(db, id), expected[retry - 1] as number);
        await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?', [id]);
      }
    });
    expect(events['job:retried'].slice(0, 3).map((e) => e.delayMs)).toEqual(expected);
  });

  it('exponential with jitter stays within ±jitter of the step', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ids = (await sluice.enqueueBatch(Array.from({ length: 10 }, () => ({ name: 'jit' })))).count;
    expect(ids).toBe(10);
    await withWorker(sluice, [failing('jit', { type: 'exponential', delayMs: 100_000, jitter: 0.25 })], {}, () =>
      waitFor(() => events['job:retried'].length === 10, { what: '10 first retries' }),
    );
    for (const e of events['job:retried']) {
      expect(e.delayMs).toBeGreaterThanOrEqual(75_000);
      expect(e.delayMs).toBeLessThanOrEqual(125_000);
      expectDelay(await msUntilRunAt(db, e.jobId), e.delayMs);
    }
    // Jittered: not all the same.
    expect(new Set(events['job:retried'].map((e) => e.delayMs)).size).toBeGreaterThan(1);
  });

  it('a backoff function on the definition is called with (retryTimes, error) and its result used', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const calls: [number, string][] = [];
    const fn = (retryTimes: number, error: Error) => {
      calls.push([retryTimes, error.message]);
      return 45_000 + retryTimes * 1_000;
    };
    const { id } = await sluice.enqueue({ name: 'fn' });
    await withWorker(sluice, [failing('fn', fn)], {}, async () => {
      await waitFor(() => events['job:retried'].length === 1, { what: 'retry 1' });
      expectDelay(await msUntilRunAt(db, id), 46_000);
      await db.query('UPDATE sluice_jobs SET run_at = NOW(3) - INTERVAL 1 SECOND WHERE id = ?', [id]);
      await waitFor(() => events['job:retried'].length === 2, { what: 'retry 2' });
      expectDelay(await msUntilRunAt(db, id), 47_000);
    });
    expect(calls).toEqual([
      [1, 'fn failed'],
      [2, 'fn failed'],
    ]);
  });

  it('a job’s own backoff overrides its definition’s, and the definition’s the worker default', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const definitionFn = () => 30_000;
    const own = await sluice.enqueue({ name: 'over', backoff: { type: 'fixed', delayMs: 70_000 } });
    const byDefinition = await sluice.enqueue({ name: 'over' });
    const byWorker = await sluice.enqueue({ name: 'plain' });
    await withWorker(
      sluice,
      [failing('over', definitionFn), failing('plain')],
      { backoff: { type: 'fixed', delayMs: 200_000 } },
      () => waitFor(() => events['job:retried'].length === 3, { what: 'three retries' }),
    );
    expectDelay(await msUntilRunAt(db, own.id), 70_000);
    expectDelay(await msUntilRunAt(db, byDefinition.id), 30_000);
    expectDelay(await msUntilRunAt(db, byWorker.id), 200_000);
  });

  it('an invalid backoff on a job is a JobValidationError naming the job, and nothing is written', async () => {
    const bad: [unknown, RegExp][] = [
      [{ type: 'linear', delayMs: 1 }, /type must be/],
      [{ type: 'fixed', delayMs: -1 }, /delayMs/],
      [{ type: 'exponential', delayMs: 10, maxDelayMs: 5 }, /maxDelayMs/],
      [{ type: 'exponential', delayMs: 10, jitter: 2 }, /jitter/],
      [{ type: 'fixed', delayMs: 1, extra: true }, /unknown field/],
      [() => 1, /function cannot be stored/],
    ];
    for (const [backoff, reason] of bad) {
      const jobs: JobSpec[] = [{ name: 'ok' }, { name: 'ok' }, { name: 'bad', backoff: backoff as StoredBackoff }];
      const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
      expect(error, JSON.stringify(backoff)).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 2, field: 'backoff' });
      expect((error as Error).message).toMatch(reason);
      const single = await db.sluice
        .enqueue({ name: 'bad', backoff: backoff as StoredBackoff })
        .catch((e: unknown) => e);
      expect(single).toMatchObject({ index: 0, field: 'backoff' });
    }
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
  });
});

describe('permanent failure', () => {
  it('PermanentJobError (exported also as PermanentError) dead-letters at once, whatever the retries left', async () => {
    expect(PermanentError).toBe(PermanentJobError);
    const sluice = db.open();
    const events = recordEvents(sluice);
    let calls = 0;
    const strict = defineJob({
      name: 'strict',
      maxRetries: 10,
      handle: () => {
        calls++;
        throw new PermanentError('cannot ever work');
      },
    });
    const { id } = await sluice.enqueue({ name: 'strict' });
    await withWorker(sluice, [strict], {}, () => waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' }));
    expect(calls).toBe(1);
    expect(events['job:retried']).toEqual([]);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(await deadRow(db, id)).toMatchObject({ retry_times: 1, max_retries: 10 });
    expect((await deadRow(db, id))?.last_error).toContain('PermanentJobError: cannot ever work');
  });
});

describe('timeoutMs', () => {
  it('aborts ctx.signal and counts the attempt as failed (retried with backoff)', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const reasons: unknown[] = [];
    const slow = defineJob({
      name: 'slow',
      timeoutMs: 100,
      maxRetries: 3,
      backoff: { type: 'fixed', delayMs: 3_600_000 },
      handle: async (_payload, ctx) => {
        await aborted(ctx.signal);
        reasons.push(ctx.signal.reason);
      },
    });
    const { id } = await sluice.enqueue({ name: 'slow' });
    await withWorker(sluice, [slow], {}, () =>
      waitFor(() => events['job:retried'].length === 1, { what: 'the retry after the timeout' }),
    );
    expect(reasons).toEqual([expect.any(HandlerTimeoutError)]);
    expect(events['job:failed']).toEqual([
      expect.objectContaining({ jobId: id, attempt: 1, error: expect.any(HandlerTimeoutError) }),
    ]);
    expect(events['job:completed']).toEqual([]);
    const row = await jobRow(db, id);
    expect(row).toMatchObject({ lock_id: '', retry_times: 1 });
    expect(row?.last_error).toContain('HandlerTimeoutError: handler "slow" did not finish within 100 ms');
  });
});

describe('heartbeats', () => {
  it('a job running longer than lockTimeoutMs is never released by the sweeper while its worker lives, and completes once', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    const gate = deferred();
    let runs = 0;
    const long = defineJob({
      name: 'long',
      handle: async () => {
        runs++;
        started.resolve();
        await gate.promise;
      },
    });
    const { id } = await sluice.enqueue({ name: 'long', maxRetries: 5 });
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: 1_500, jitterMs: 0 });
    await withWorker(sluice, [long], { lockTimeoutMs: 1_500 }, async () => {
      try {
        await started.promise;
        const lockId = (await jobRow(db, id))?.lock_id;
        const lockedAts = new Set<number>();
        const since = Date.now();
        // The job runs ~4 s, well past the lock timeout, while the sweeper passes again and again.
        while (Date.now() - since < 4_000) {
          const result = await maintainer.runOnce();
          expect(result).toMatchObject({
            leader: true,
            tasks: { releaseStaleClaims: { claims: 0 }, releaseDeadWorkers: { claims: 0 } },
          });
          const row = await jobRow(db, id);
          expect(row).toMatchObject({ lock_id: lockId, retry_times: 0 });
          lockedAts.add((row!.locked_at as Date).getTime());
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // The claim was extended several times along the way.
        expect(lockedAts.size).toBeGreaterThanOrEqual(3);
        gate.resolve();
        await waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' });
      } finally {
        gate.resolve(); // never leave a handler hanging when the test fails
      }
    });
    await maintainer.stop();
    expect(runs).toBe(1);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(events['claim:lost']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
  });

  it('a claim whose worker stopped heartbeating is released after lockTimeoutMs, with retry_times + 1', async () => {
    // A worker that died: its claim stays with a locked_at that no heartbeat moves any more.
    const dead = await insertJob(db, { lockId: 'gone-host-4242~dead.1', lockedAt: ago(10 * SECOND), retryTimes: 1 });
    const live = await insertJob(db, { lockId: 'live-host-1~live.1', lockedAt: ago(200) });
    const clock = fakeClock();
    const maintainer = db.sluice.maintenance({ lockTimeoutMs: 1_500, jitterMs: 0, clock: clock.now });
    await maintainer.runOnce();
    clock.advance(1_500);
    // The live worker's heartbeat extends its claim meanwhile.
    await db.query('UPDATE sluice_jobs SET locked_at = NOW(3) WHERE id = ?', [live]);
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { releaseStaleClaims: { claims: 1 } } });
    await maintainer.stop();
    expect(await jobRow(db, dead)).toMatchObject({ lock_id: '', locked_at: NO_CLAIM, retry_times: 2 });
    expect((await jobRow(db, dead))?.last_error).toMatch(/^claim gone-host-4242~dead\.1 expired after 1500 ms/);
    expect(await jobRow(db, live)).toMatchObject({ lock_id: 'live-host-1~live.1', retry_times: 0 });
  });
});
