import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { useAppEffects } from '../helpers/appEffects.ts';
import { countRows, deadRow, jobRow } from '../helpers/factory.ts';
import { fakeClock } from '../helpers/fakeClock.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/** README "Delivery modes", exactly-once: ctx.trx commits with the fenced delete or rolls back. */
const db = useTestDatabase('sem_exactly_once');

const effects = useAppEffects(db);

describe('exactly-once', () => {
  it('commits the handler’s writes through ctx.trx together with the job’s removal', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const seenInside: { jobStillThere: boolean; hasTrx: boolean }[] = [];
    const charge = defineJob<{ order: number }>({
      name: 'charge',
      delivery: 'exactly-once',
      async handle(_payload, ctx) {
        const trx = ctx.trx;
        if (!trx) throw new Error('no ctx.trx');
        await trx('app_effects').insert({ job_id: ctx.job.id, attempt: ctx.job.retryTimes + 1 });
        // The job's delete runs after the handler, in this same transaction.
        seenInside.push({
          jobStillThere: (await trx('sluice_jobs').where({ id: ctx.job.id }).first()) !== undefined,
          hasTrx: true,
        });
      },
    });
    const { id } = await sluice.enqueue({ name: 'charge', payload: { order: 1 } });
    await withWorker(sluice, [charge], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );

    expect(seenInside).toEqual([{ jobStillThere: true, hasTrx: true }]);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(await effects()).toEqual([{ job_id: id, attempt: 1 }]);
    expect(events['job:completed'].map((e) => e.jobId)).toEqual([id]);
    expect(events['job:failed']).toEqual([]);
    expect(events['claim:lost']).toEqual([]);
  });

  it('a deadlock in the transaction re-runs it instead of failing the job: no retry counted, one effect', async () => {
    await db.query('CREATE TABLE IF NOT EXISTS app_contended (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB');
    await db.query('DELETE FROM app_contended');
    await db.query('INSERT INTO app_contended (id, v) SELECT seq, 0 FROM seq_1_to_101');
    const sluice = db.open();
    const events = recordEvents(sluice);
    const calls: number[] = [];
    const charge = defineJob({
      name: 'charge',
      delivery: 'exactly-once',
      maxRetries: 0,
      async handle(_payload, ctx) {
        const trx = ctx.trx as NonNullable<typeof ctx.trx>;
        calls.push(ctx.job.retryTimes);
        await trx('app_effects').insert({ job_id: ctx.job.id, attempt: calls.length });
        if (calls.length > 1) return;
        // First run: a real deadlock against a heavier transaction, which InnoDB keeps; ours is the victim.
        const other = await db.sluice.knex.transaction();
        try {
          await other('app_contended').whereBetween('id', [2, 101]).update({ v: 1 });
          await trx('app_contended').where({ id: 1 }).update({ v: 1 });
          const blocked = trx('app_contended').where({ id: 2 }).update({ v: 2 });
          const closing = new Promise((resolve) => setTimeout(resolve, 200)).then(() =>
            other('app_contended').where({ id: 1 }).update({ v: 2 }),
          );
          await Promise.all([blocked, closing.then(() => other.commit())]);
        } finally {
          if (!other.isCompleted()) await other.rollback().catch(() => undefined);
        }
      },
    });
    const { id } = await sluice.enqueue({ name: 'charge' });
    await withWorker(sluice, [charge], {}, () =>
      waitFor(() => events['job:completed'].length === 1, { what: 'job:completed' }),
    );

    expect(calls).toEqual([0, 0]);
    expect(events['job:failed']).toEqual([]);
    expect(events['job:dead']).toEqual([]);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(await deadRow(db, id)).toBeUndefined();
    // The first run's insert was rolled back with the deadlock; the re-run's committed with the removal.
    expect(await effects()).toEqual([{ job_id: id, attempt: 2 }]);
  });

  it('rolls the handler’s writes back when it throws; the job is retried, then dead-lettered', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const visibleInsideTrx: number[] = [];
    const charge = defineJob({
      name: 'charge',
      delivery: 'exactly-once',
      maxRetries: 1,
      backoff: { type: 'fixed', delayMs: 1 },
      async handle(_payload, ctx) {
        const trx = ctx.trx as NonNullable<typeof ctx.trx>;
        await trx('app_effects').insert({ job_id: ctx.job.id, attempt: ctx.job.retryTimes + 1 });
        const [row] = await trx('app_effects').count({ n: '*' }).where({ job_id: ctx.job.id });
        visibleInsideTrx.push(Number(row?.n));
        throw new Error(`declined #${ctx.job.retryTimes + 1}`);
      },
    });
    const { id } = await sluice.enqueue({ name: 'charge' });
    await withWorker(sluice, [charge], {}, () => waitFor(() => deadRow(db, id), { what: 'the job in dead_jobs' }));

    // Each attempt's write existed inside its transaction (and only its own: the first was undone)…
    expect(visibleInsideTrx).toEqual([1, 1]);
    // …and none survived.
    expect(await effects()).toEqual([]);
    expect(events['job:retried'].map((e) => [e.jobId, e.retryTimes])).toEqual([[id, 1]]);
    expect(events['job:dead'].map((e) => e.jobId)).toEqual([id]);
    expect((await deadRow(db, id))?.last_error).toContain('declined #2');
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(events['job:completed']).toEqual([]);
  });

  it('rolls the handler’s writes back when its claim was swept and re-claimed meanwhile, and reports claim:lost', async () => {
    const first = db.open();
    const second = db.open();
    const firstEvents = recordEvents(first);
    const secondEvents = recordEvents(second);
    const gates = [deferred(), deferred()];
    const attempts: { attempt: number; lockId: string; visible: number }[] = [];
    const charge = defineJob({
      name: 'charge',
      delivery: 'exactly-once',
      maxRetries: 5,
      async handle(_payload, ctx) {
        const trx = ctx.trx as NonNullable<typeof ctx.trx>;
        const attempt = ctx.job.retryTimes + 1;
        await trx('app_effects').insert({ job_id: ctx.job.id, attempt });
        const [row] = await trx('app_effects').count({ n: '*' }).where({ job_id: ctx.job.id, attempt });
        attempts.push({ attempt, lockId: ctx.job.lockId, visible: Number(row?.n) });
        await gates[attempt - 1]?.promise;
      },
    });
    const { id } = await db.sluice.enqueue({ name: 'charge' });
    // Heartbeats far apart: the claim is lost only because the test sweeps it.
    const slow = { concurrency: 1, lockTimeoutMs: 600_000, heartbeatIntervalMs: 300_000 };
    // On any failure, let the handlers return: an open handler transaction would block the next test.
    const openGates = () => {
      for (const g of gates) g.resolve();
    };
    await withWorker(first, [charge], slow, async () => {
      try {
        await waitFor(() => attempts.length === 1, { what: 'the first attempt running' });

        // The sweeper takes the claim back: it saw the claim unchanged for the worker's lock
        // timeout (600 s) of its own clock — the next heartbeat is 300 s away, the worker looks stalled…
        const clock = fakeClock();
        const maintainer = db.sluice.maintenance({ lockTimeoutMs: 60_000, jitterMs: 0, clock: clock.now });
        await maintainer.runOnce();
        clock.advance(600_000);
        expect(await maintainer.runOnce()).toMatchObject({
          leader: true,
          tasks: { releaseStaleClaims: { claims: 1 } },
        });
        await maintainer.stop();
        expect(await jobRow(db, id)).toMatchObject({ lock_id: '', retry_times: 1 });

        // …and another worker claims the job again.
        await withWorker(second, [charge], slow, async () => {
          try {
            await waitFor(() => attempts.length === 2, { what: 'the second attempt running on the other worker' });
            expect(attempts[1]?.lockId).not.toBe(attempts[0]?.lockId);

            // The first handler now returns: its fenced delete matches nothing, so its transaction rolls back.
            gates[0]?.resolve();
            await waitFor(() => firstEvents['claim:lost'].length === 1, { what: 'claim:lost on the first worker' });
            expect(firstEvents['claim:lost'][0]).toMatchObject({
              operation: 'complete',
              lockId: attempts[0]?.lockId,
              jobIds: [id],
              lost: 1,
            });
            expect(await effects()).toEqual([]);
            expect(await jobRow(db, id)).toMatchObject({ lock_id: attempts[1]?.lockId, retry_times: 1 });

            gates[1]?.resolve();
            await waitFor(() => secondEvents['job:completed'].length === 1, { what: 'the second attempt completed' });
          } finally {
            openGates();
          }
        });
      } finally {
        openGates();
      }
    });

    expect(attempts.map((a) => [a.attempt, a.visible])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    expect(await effects()).toEqual([{ job_id: id, attempt: 2 }]);
    expect(await jobRow(db, id)).toBeUndefined();
    expect(firstEvents['job:completed']).toEqual([]);
    expect(secondEvents['job:completed'].map((e) => e.jobId)).toEqual([id]);
    expect(secondEvents['claim:lost']).toEqual([]);
    // History holds the one completion that counted.
    expect(await db.query('SELECT job_id, retry_times FROM sluice_job_history')).toEqual([
      { job_id: id, retry_times: 1 },
    ]);
  });
});
