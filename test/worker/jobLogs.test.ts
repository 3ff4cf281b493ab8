import { describe, expect, it } from 'vitest';
import { defineJob, type JobDefinition, type Sluice } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * ctx.log(message, fields): a job's own lines, kept in job_logs with the job (live, history, dead)
 * and shown by jobs.get. Written in batches — with the heartbeat's statements while the job runs,
 * with the completion, retry or dead-letter at its end — never a statement per call; capped per
 * attempt in lines and bytes, the rest counted as dropped; a lost claim writes none.
 */
const db = useTestDatabase('job_logs');

interface Sent {
  readonly sql: string;
  /** knex's id of the transaction the statement ran in, if any. */
  readonly __knexTxId?: string;
}

/** Every statement one sluice instance sends. */
function statements(sluice: Sluice): Sent[] {
  const seen: Sent[] = [];
  sluice.knex.on('query', (q: Sent) => seen.push(q));
  return seen;
}

const inserts = (sent: readonly Sent[], table = 'job_logs') =>
  sent.filter((q) => new RegExp(`INSERT INTO \`sluice_${table}\``).test(q.sql));

async function runOne(sluice: Sluice, definition: JobDefinition<any>, payload: unknown = {}): Promise<number> {
  const events = recordEvents(sluice);
  const { id } = await sluice.enqueue({ name: definition.name, payload });
  await withWorker(sluice, [definition], {}, () =>
    waitFor(() => events['job:completed'].length + events['job:dead'].length + events['job:failed'].length >= 1, {
      what: `job ${id} finished`,
    }),
  );
  return id;
}

async function runDead(sluice: Sluice, definition: JobDefinition<any>): Promise<number> {
  const events = recordEvents(sluice);
  const { id } = await sluice.enqueue({ name: definition.name });
  await withWorker(sluice, [definition], {}, () => waitFor(() => events['job:dead'].length === 1));
  return id;
}

describe('ctx.log', () => {
  it('keeps the lines with the completed job, written in one statement with its completion', async () => {
    const sluice = db.open();
    const sent = statements(sluice);
    const chatty = defineJob({
      name: 'chatty',
      handle(_payload, ctx) {
        for (let i = 1; i <= 5; i++) ctx.log(`step ${i}`, i % 2 === 0 ? { i, even: true } : undefined);
      },
    });
    const id = await runOne(sluice, chatty);
    const during = [...sent];
    const job = await sluice.jobs.get(id);
    expect(job?.state).toBe('completed');
    expect(job?.logs.map((l) => [l.attempt, l.message, l.fields])).toEqual([
      [1, 'step 1', undefined],
      [1, 'step 2', { i: 2, even: true }],
      [1, 'step 3', undefined],
      [1, 'step 4', { i: 4, even: true }],
      [1, 'step 5', undefined],
    ]);
    expect(job?.logsDropped).toBe(0);
    // One statement for five calls, in the completion's transaction (the one that copies it to the history).
    const [logs] = inserts(during);
    expect(inserts(during)).toHaveLength(1);
    expect(logs?.__knexTxId).toBeDefined();
    expect(inserts(during, 'job_history').map((q) => q.__knexTxId)).toEqual([logs?.__knexTxId]);
    // Times on the DB clock, in the order logged.
    const times = (job?.logs ?? []).map((l) => l.at.getTime());
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it('writes the lines of a running job with its heartbeat', async () => {
    const sluice = db.open();
    const release = deferred();
    const long = defineJob({
      name: 'long',
      async handle(_payload, ctx) {
        ctx.log('started', { pid: process.pid });
        await release.promise;
        ctx.log('finished');
      },
    });
    const events = recordEvents(sluice);
    const { id } = await sluice.enqueue({ name: 'long' });
    await withWorker(sluice, [long], { heartbeatIntervalMs: 100 }, async () => {
      const running = await waitFor(
        async () => {
          const job = await sluice.jobs.get(id);
          return job?.state === 'running' && job.logs.length === 1 ? job : undefined;
        },
        { what: 'the first line written while the job runs' },
      );
      expect(running.logs[0]).toMatchObject({ attempt: 1, message: 'started', fields: { pid: process.pid } });
      release.resolve();
      await waitFor(() => events['job:completed'].length === 1);
    });
    expect((await sluice.jobs.get(id))?.logs.map((l) => l.message)).toEqual(['started', 'finished']);
  });

  it('caps an attempt at maxLogLines lines and maxLogBytes bytes, counting the rest as dropped', async () => {
    const sluice = db.open({ maxLogLines: 3 });
    const many = defineJob({
      name: 'many',
      handle(_payload, ctx) {
        for (let i = 1; i <= 10; i++) ctx.log(`line ${i}`);
      },
    });
    const id = await runOne(sluice, many);
    const job = await sluice.jobs.get(id);
    expect(job?.logs.map((l) => l.message)).toEqual(['line 1', 'line 2', 'line 3']);
    expect(job?.logsDropped).toBe(7);

    const small = db.open({ maxLogBytes: 100 });
    const wide = defineJob({
      name: 'wide',
      handle(_payload, ctx) {
        ctx.log('x'.repeat(60));
        ctx.log('y'.repeat(60)); // 120 bytes in all: over the cap
        ctx.log('z'.repeat(30), { n: 1 }); // 60 + 30 + 7 bytes: fits
      },
    });
    const wideId = await runOne(small, wide);
    const wideJob = await small.jobs.get(wideId);
    expect(wideJob?.logs.map((l) => l.message[0])).toEqual(['x', 'z']);
    expect(wideJob?.logsDropped).toBe(1);
  });

  it('keeps each attempt’s lines: a failed attempt’s go with its retry, a dead job keeps them all', async () => {
    const sluice = db.open();
    const failing = defineJob({
      name: 'failing',
      maxRetries: 1,
      backoff: { type: 'fixed', delayMs: 0 },
      handle(_payload, ctx) {
        ctx.log(`attempt ${ctx.job.retryTimes + 1} begins`);
        throw new Error('no');
      },
    });
    const id = await runDead(sluice, failing);
    const job = await sluice.jobs.get(id);
    expect(job?.state).toBe('dead');
    expect(job?.logs.map((l) => [l.attempt, l.message])).toEqual([
      [1, 'attempt 1 begins'],
      [2, 'attempt 2 begins'],
    ]);
  });

  it('keeps the lines of the latest keptAttempts attempts (trimmed with the errors); keptAttempts 0 keeps none', async () => {
    const failing = defineJob({
      name: 'failing',
      maxRetries: 3,
      backoff: { type: 'fixed', delayMs: 0 },
      handle(_payload, ctx) {
        ctx.log(`attempt ${ctx.job.retryTimes + 1}`);
        throw new Error('no');
      },
    });
    const two = db.open({ keptAttempts: 2 });
    const id = await runDead(two, failing);
    const job = await two.jobs.get(id);
    expect(job?.logs.map((l) => l.attempt)).toEqual([3, 4]);
    expect(job?.errors.map((e) => e.attempt)).toEqual([4, 3]);

    const none = db.open({ keptAttempts: 0 });
    const noneId = await runDead(none, failing);
    expect(await countRows(db, 'sluice_job_logs', 'job_id = ?', [noneId])).toBe(0);
  });

  it('keeps the lines of exactly-once and at-most-once jobs', async () => {
    const sluice = db.open();
    const once = (delivery: 'exactly-once' | 'at-most-once') =>
      defineJob({
        name: delivery,
        delivery,
        handle(_payload, ctx) {
          ctx.log(`ran ${delivery}`);
        },
      });
    for (const delivery of ['exactly-once', 'at-most-once'] as const) {
      const id = await runOne(sluice, once(delivery));
      await waitFor(async () => ((await sluice.jobs.get(id))?.logs.length ?? 0) === 1, { what: `${delivery} line` });
      expect((await sluice.jobs.get(id))?.logs[0]).toMatchObject({ attempt: 1, message: `ran ${delivery}` });
    }
  });

  it('a lost claim writes no lines', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const started = deferred();
    const stolen = deferred();
    const robbed = defineJob({
      name: 'robbed',
      async handle(_payload, ctx) {
        ctx.log('before');
        started.resolve();
        await stolen.promise;
        ctx.log('after');
      },
    });
    const { id } = await sluice.enqueue({ name: 'robbed' });
    await withWorker(sluice, [robbed], { heartbeatIntervalMs: 60_000, lockTimeoutMs: 200_000 }, async () => {
      await started.promise;
      await db.query(`UPDATE sluice_jobs SET lock_id = 'someone-else' WHERE id = ?`, [id]);
      stolen.resolve();
      await waitFor(() => events['claim:lost'].length === 1, { what: 'the lost claim reported' });
    });
    expect(await countRows(db, 'sluice_job_logs')).toBe(0);
  });

  it('fields that cannot be JSON throw a RangeError in the handler', async () => {
    const sluice = db.open();
    const caught: unknown[] = [];
    const odd = defineJob({
      name: 'odd',
      handle(_payload, ctx) {
        try {
          ctx.log('big', { n: 10n });
        } catch (error) {
          caught.push(error);
        }
      },
    });
    const id = await runOne(sluice, odd);
    expect(caught).toEqual([expect.any(RangeError)]);
    expect((await sluice.jobs.get(id))?.logs).toEqual([]);
  });
});
