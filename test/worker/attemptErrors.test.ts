import { describe, expect, it } from 'vitest';
import { defineJob, type Sluice } from '../../src/index.ts';
import { ERROR_CODE_BYTES, ERROR_MESSAGE_BYTES, ERROR_STACK_BYTES } from '../../src/model/attemptError.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * Every attempt's error, bounded: a failed attempt keeps its number, time (DB clock), worker,
 * message, code and stack in job_errors, written in the transaction of its fenced retry or
 * dead-letter — so a lost claim writes nothing — trimmed to the latest keptAttempts; jobs.get shows
 * them newest first, for live, completed and dead jobs. A job that never fails writes nothing there.
 */
const db = useTestDatabase('attempt_errors');

class CodedError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'CodedError';
  }
}

/** Fails its first `failures` attempts with code E<attempt>, then succeeds. */
const flaky = defineJob<{ failures: number }>({
  name: 'flaky',
  maxRetries: 20,
  backoff: { type: 'fixed', delayMs: 0 },
  handle(payload, ctx) {
    const attempt = ctx.job.retryTimes + 1;
    if (attempt <= payload.failures) throw new CodedError(`attempt ${attempt} failed`, `E${attempt}`);
    return { attempt };
  },
});

/** Every statement one sluice instance sends, as SQL text. */
function statements(sluice: Sluice): string[] {
  const seen: string[] = [];
  sluice.knex.on('query', (q: { sql: string }) => seen.push(q.sql));
  return seen;
}

async function run(sluice: Sluice, failures: number, maxRetries?: number): Promise<number> {
  const events = recordEvents(sluice);
  const { id } = await sluice.enqueue({ name: 'flaky', payload: { failures }, maxRetries });
  await withWorker(sluice, [flaky], {}, async () => {
    await waitFor(() => events['job:completed'].length + events['job:dead'].length === 1, { what: `job ${id} done` });
  });
  return id;
}

describe('attempt errors', () => {
  it('keeps each failed attempt (number, DB time, worker, message, code, stack), newest first, with the completed job', async () => {
    const sluice = db.open();
    const before = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
    const id = await run(sluice, 2);
    const after = await db.query<{ now: Date }>('SELECT NOW(3) AS now');
    const job = await sluice.jobs.get(id);
    expect(job).toMatchObject({ state: 'completed', retryTimes: 2 });
    const [workerId] = (await db.query<{ id: string }>('SELECT DISTINCT worker_id AS id FROM sluice_job_errors')).map(
      (r) => r.id,
    );
    expect(workerId).toMatch(/~/);
    expect(job?.errors).toEqual([
      expect.objectContaining({ attempt: 2, workerId, message: 'attempt 2 failed', code: 'E2' }),
      expect.objectContaining({ attempt: 1, workerId, message: 'attempt 1 failed', code: 'E1' }),
    ]);
    for (const e of job?.errors ?? []) {
      expect(e.stack).toMatch(/^CodedError: attempt \d failed\n\s+at /);
      expect(e.failedAt.getTime()).toBeGreaterThanOrEqual((before[0] as { now: Date }).now.getTime());
      expect(e.failedAt.getTime()).toBeLessThanOrEqual((after[0] as { now: Date }).now.getTime());
    }
  });

  it('keeps them with the dead row, the last attempt included', async () => {
    const sluice = db.open();
    const id = await run(sluice, 99, 2);
    const job = await sluice.jobs.get(id);
    expect(job?.state).toBe('dead');
    expect(job?.errors.map((e) => [e.attempt, e.code])).toEqual([
      [3, 'E3'],
      [2, 'E2'],
      [1, 'E1'],
    ]);
  });

  it('trims to the latest keptAttempts in the failing transaction', async () => {
    const sluice = db.open({ keptAttempts: 3 });
    const id = await run(sluice, 7);
    expect((await sluice.jobs.get(id))?.errors.map((e) => e.attempt)).toEqual([7, 6, 5]);
    expect(await countRows(db, 'sluice_job_errors', 'job_id = ?', [id])).toBe(3);
  });

  it('cuts message, code and stack to their byte limits, at a character boundary', async () => {
    const sluice = db.open();
    const huge = defineJob({
      name: 'huge',
      maxRetries: 0,
      handle() {
        const error = new CodedError('é'.repeat(5_000), 'C'.repeat(500));
        error.stack = `CodedError: ${'€'.repeat(10_000)}`;
        throw error;
      },
    });
    const events = recordEvents(sluice);
    const { id } = await sluice.enqueue({ name: 'huge' });
    await withWorker(sluice, [huge], {}, () => waitFor(() => events['job:dead'].length === 1));
    const [error] = (await sluice.jobs.get(id))?.errors ?? [];
    expect(Buffer.byteLength(error?.message ?? '')).toBeLessThanOrEqual(ERROR_MESSAGE_BYTES);
    expect(error?.message).toMatch(/^é+…$/);
    expect(error?.code).toBe('C'.repeat(ERROR_CODE_BYTES));
    expect(Buffer.byteLength(error?.stack ?? '')).toBeLessThanOrEqual(ERROR_STACK_BYTES);
    expect(error?.stack).toMatch(/^CodedError: €+…$/);
  });

  it('an at-most-once job that fails keeps its error with its history row (no claim left to fence)', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const once = defineJob({
      name: 'once',
      delivery: 'at-most-once',
      handle() {
        throw new CodedError('lost on purpose', 'ONCE');
      },
    });
    const { id } = await sluice.enqueue({ name: 'once' });
    await withWorker(sluice, [once], {}, () => waitFor(() => events['job:failed'].length === 1));
    await waitFor(async () => ((await sluice.jobs.get(id))?.errors.length ?? 0) === 1, { what: 'the error kept' });
    expect((await sluice.jobs.get(id))?.errors[0]).toMatchObject({ attempt: 1, code: 'ONCE' });
  });

  it('a lost claim writes no attempt error (the retry and the error share one fenced transaction)', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    const stolen = deferred();
    const thief = defineJob({
      name: 'stolen',
      async handle() {
        started.resolve();
        await stolen.promise;
        throw new CodedError('too late', 'LATE');
      },
    });
    const { id } = await sluice.enqueue({ name: 'stolen' });
    await withWorker(sluice, [thief], { heartbeatIntervalMs: 60_000, lockTimeoutMs: 200_000 }, async () => {
      await started.promise;
      await db.query(`UPDATE sluice_jobs SET lock_id = 'someone-else' WHERE id = ?`, [id]);
      stolen.resolve();
      await waitFor(() => events['claim:lost'].length === 1, { what: 'the lost claim reported' });
    });
    expect(await countRows(db, 'sluice_job_errors')).toBe(0);
    expect(events['job:retried']).toEqual([]);
  });

  it('a job that never fails (and never logs) sends no statement about attempts; keptAttempts 0 keeps none', async () => {
    const sluice = db.open();
    const sent = statements(sluice);
    const id = await run(sluice, 0);
    expect(sent.filter((sql) => /DELETE FROM `sluice_jobs`/.test(sql))).toHaveLength(1);
    expect(sent.filter((sql) => /job_errors|job_logs/.test(sql))).toEqual([]);
    expect((await sluice.jobs.get(id))?.errors).toEqual([]);

    const off = db.open({ keptAttempts: 0 });
    const offSent = statements(off);
    const failed = await run(off, 1);
    const during = [...offSent];
    expect((await off.jobs.get(failed))?.errors).toEqual([]);
    // Without anything to keep, the retry is the one autocommit UPDATE it always was: the only
    // transaction is the completion's (with its history row).
    expect(during.filter((sql) => /job_errors|job_logs/.test(sql))).toEqual([]);
    expect(during.filter((sql) => /retry_times = retry_times \+ 1/.test(sql))).toHaveLength(1);
    expect(during.filter((sql) => /^BEGIN/i.test(sql.trim()))).toHaveLength(1);
  });
});
