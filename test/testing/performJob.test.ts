import { describe, expect, it } from 'vitest';
import { defineJob, JobSnoozedError, OptionsError, WaitTimeoutError } from '../../src/index.ts';
import { enqueuedJobs, performJob } from '../../src/testing/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('testing_perform');

describe('performJob', () => {
  it('gives the handler the real ctx: its own queue, a live signal, parents(), and a retry count', async () => {
    const seen = defineJob<{ n: number }>({
      name: 'seen',
      async handle({ n }, ctx) {
        return {
          n,
          queue: ctx.job.queue,
          aborted: ctx.signal.aborted,
          parents: await ctx.parents(),
          maxRetries: ctx.job.maxRetries,
          trx: ctx.trx === undefined,
        };
      },
    });
    const run = await performJob(db.sluice, seen, { n: 7 }, { maxRetries: 2 });
    expect(run.ok).toBe(true);
    const result = (run.ok ? run.result : undefined) as { queue: string } | undefined;
    expect(result).toMatchObject({ n: 7, aborted: false, parents: [], maxRetries: 2, trx: true });
    expect(result?.queue).toMatch(/^testing\.perform\.[0-9a-f]{12}$/);
    expect(run.job).toMatchObject({ id: run.id, state: 'completed', result });
  });

  it('exactly-once: the handler writes through ctx.trx, which commits with the completion or rolls back with a failure', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS perform_ledger (job_id BIGINT PRIMARY KEY, amount INT NOT NULL)');
    const charge = defineJob<{ amount: number }>({
      name: 'charge',
      delivery: 'exactly-once',
      maxRetries: 0,
      async handle({ amount }, ctx) {
        if (!ctx.trx) throw new Error('no transaction');
        await ctx.trx('perform_ledger').insert({ job_id: ctx.job.id, amount });
        if (amount < 0) throw new Error('refused');
        return amount;
      },
    });
    const ok = await performJob(db.sluice, charge, { amount: 5 });
    const failed = await performJob(db.sluice, charge, { amount: -1 });
    expect(ok).toMatchObject({ ok: true, result: 5, job: { state: 'completed' } });
    expect(failed).toMatchObject({ ok: false, error: new Error('refused'), job: { state: 'dead' } });
    expect(await db.query('SELECT job_id, amount FROM perform_ledger')).toEqual([{ job_id: ok.id, amount: 5 }]);
  });

  it('returns the JobSnoozedError of a snooze, and cancels the job it would have run again', async () => {
    const later = defineJob({ name: 'later', handle: (_p, ctx) => ctx.snooze(60_000) });
    const run = await performJob(db.sluice, later, {});
    expect(run.ok).toBe(false);
    expect(run.ok ? undefined : run.error).toBeInstanceOf(JobSnoozedError);
    expect(run.job?.state).toBe('delayed');
    expect(await enqueuedJobs(db.sluice)).toEqual([]);
    expect((await db.sluice.jobs.get(run.id))?.state).toBe('cancelled');
  });

  it('a failure with retries left: the job was retrying, then cancelled; the thrown error is the same object', async () => {
    const thrown = new Error('flaky');
    const flaky = defineJob({
      name: 'flaky',
      maxRetries: 3,
      handle: () => {
        throw thrown;
      },
    });
    const run = await performJob(db.sluice, flaky, {});
    expect(run.ok ? undefined : run.error).toBe(thrown);
    expect(run.job).toMatchObject({ state: 'retrying', retryTimes: 1, lastError: expect.stringContaining('flaky') });
    expect(await enqueuedJobs(db.sluice)).toEqual([]);
  });

  it("runs the job now, whatever the definition's debounce or throttle", async () => {
    for (const limit of [{ debounce: { key: 'k', delayMs: 60_000 } }, { throttle: { key: 'k', windowMs: 60_000 } }]) {
      const calm = defineJob({ name: 'calm', ...limit, handle: () => 'ran' });
      for (let run = 0; run < 2; run++) {
        expect(await performJob(db.sluice, calm, {}, { timeoutMs: 5_000 })).toMatchObject({ ok: true, result: 'ran' });
      }
    }
  });

  it('keeps every progress value, in order, and the log lines', async () => {
    const steps = defineJob({
      name: 'steps',
      handle: (_p, ctx) => {
        for (const step of [0.25, 0.5, { phase: 'upload' }, 1]) ctx.progress(step);
        ctx.log('done', { steps: 4 });
      },
    });
    const run = await performJob(db.sluice, steps, {});
    expect(run.progress).toEqual([0.25, 0.5, { phase: 'upload' }, 1]);
    expect(run.job?.logs).toMatchObject([{ attempt: 1, message: 'done', fields: { steps: 4 } }]);
  });

  it('gives up after timeoutMs with a WaitTimeoutError: the handler is aborted and the job cancelled', async () => {
    let aborted = false;
    const stuck = defineJob({
      name: 'stuck',
      handle: (_p, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve(undefined);
          }),
        ),
    });
    const error = await performJob(db.sluice, stuck, {}, { timeoutMs: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect((error as WaitTimeoutError).message).toMatch(/^job \d+ did not finish within 500 ms$/);
    expect(aborted).toBe(true);
    expect(await enqueuedJobs(db.sluice)).toEqual([]);
  });

  it('refuses an unknown option, naming the nearest one, before enqueuing anything', async () => {
    const noop = defineJob({ name: 'noop', handle: () => undefined });
    await expect(performJob(db.sluice, noop, {}, { timeout: 5 } as never)).rejects.toThrow(
      new OptionsError('timeout', 'is not an option of performJob (did you mean timeoutMs?)'),
    );
    await expect(performJob(db.sluice, noop, {}, { timeoutMs: 0 })).rejects.toThrow(OptionsError);
    expect(await enqueuedJobs(db.sluice)).toEqual([]);
  });
});
