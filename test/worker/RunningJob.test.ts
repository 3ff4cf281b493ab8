import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineJob, PermanentJobError } from '../../src/index.ts';
import type { Job } from '../../src/model/job.ts';
import { RunningJob } from '../../src/worker/RunningJob.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('running_job');

const JOB = { id: 1, lockId: 'h-1~a.1' } as Job;

describe('RunningJob: one state, changed only by its transitions', () => {
  it('running → finishing → ended; a finished job is no longer the heartbeat’s or a stop’s', () => {
    const r = new RunningJob(JOB);
    expect(r.holdsClaim).toBe(true);
    expect(r.finish()).toBe(true);
    expect(r.holdsClaim).toBe(false);
    expect(r.lose()).toBe(false);
    expect(r.release()).toBe(false);
    r.end();
    expect(r.state).toBe('ended');
    expect(r.cancellation.aborted).toBe(false);
  });

  it('lost: the signal aborts once, and the outcome is still written (through the fence)', () => {
    const r = new RunningJob(JOB);
    expect(r.lose()).toBe(true);
    expect(r.lose()).toBe(false);
    expect(r.cancellation.signal.aborted).toBe(true);
    expect(r.finish()).toBe(true);
  });

  it('released by a stop: the outcome is no longer this worker’s to write', () => {
    const r = new RunningJob(JOB);
    expect(r.release()).toBe(true);
    expect(r.cancellation.aborted).toBe(true);
    expect(r.finish()).toBe(false);
    expect(r.state).toBe('released');
  });

  it('detached (at-most-once): nothing to extend, release or lose', () => {
    const r = new RunningJob(JOB);
    r.detach();
    expect([r.holdsClaim, r.lose(), r.release()]).toEqual([false, false, false]);
    expect(r.finish()).toBe(true);
  });

  it('exactly-once re-run: finishing goes back to running, the claim held again', () => {
    const r = new RunningJob(JOB);
    r.finish();
    r.resume();
    expect(r.holdsClaim).toBe(true);
  });
});

describe('a claimed job’s payload', () => {
  it('stays the bytes the claim read until the attempt opens it, once; one that is not JSON is a permanent error', () => {
    const r = new RunningJob({ ...JOB, payload: null }, 1, Buffer.from('{"to":"é 😀"}'));
    expect(r.job.payload).toBeNull();
    expect(r.openPayload()).toBeNull();
    const opened = r.job.payload;
    expect(opened).toEqual({ to: 'é 😀' });
    expect(r.openPayload()).toBeNull();
    expect(r.job.payload).toBe(opened);

    const bad = new RunningJob({ ...JOB, payload: null }, 1, '{"to":');
    const error = bad.openPayload();
    expect(error).toBeInstanceOf(PermanentJobError);
    expect(error?.message).toMatch(/^payload of job 1 is not valid JSON/);
    expect(bad.openPayload()).toBe(error);
    expect(bad.job.payload).toBeNull();
  });
});

describe('a succeeded job waiting for its completion', () => {
  it('lets go of its payload, keeps its identity, and leaves the job the handler got as it was', () => {
    const job = { id: 7, queue: 'q', name: 'n', lockId: 'h-1~a.1', idempotencyKey: 'k', payload: { big: 'x' } } as Job;
    const r = new RunningJob(job);
    r.finish();
    r.dropPayload();
    expect(r.job.payload).toBeNull();
    expect({ id: r.job.id, queue: r.job.queue, name: r.job.name, lockId: r.job.lockId }).toEqual({
      id: 7,
      queue: 'q',
      name: 'n',
      lockId: 'h-1~a.1',
    });
    expect(r.job.idempotencyKey).toBe('k');
    expect(job.payload).toEqual({ big: 'x' });
  });

  it('a handler’s ctx still shows its payload after the job completed', async () => {
    const seen: unknown[] = [];
    let kept: { readonly job: Job } | undefined;
    const keeper = defineJob<{ n: number }>({
      name: 'keeper',
      handle(_payload, ctx) {
        kept = ctx;
      },
    });
    const sluice = db.open();
    const events = recordEvents(sluice);
    await sluice.enqueue({ name: 'keeper', payload: { n: 42 } });
    await withWorker(sluice, [keeper], { concurrency: 2 }, async () => {
      await waitFor(() => events['job:completed'].length === 1, { what: 'the job completed' });
      seen.push(kept?.job.payload);
    });
    expect(seen).toEqual([{ n: 42 }]);
  });
});

describe('an exactly-once job and its own heartbeat', () => {
  it('its worker’s commit is never reported as a lost claim, though the heartbeat waits on the row it deletes', async () => {
    // Each handler locks its own job row in its transaction and holds it across several
    // heartbeats: every extension of the claim waits on that lock until the handler's commit, then
    // finds the row gone — the worker's own doing, not a lost claim.
    const locker = defineJob<{ n: number }>({
      name: 'locker',
      delivery: 'exactly-once',
      async handle(_payload, ctx) {
        await ctx.trx!.raw('SELECT id FROM sluice_jobs WHERE id = ? FOR UPDATE', [ctx.job.id]);
        await sleep(350);
      },
    });
    const sluice = db.open();
    const events = recordEvents(sluice);
    const JOBS = 30;
    await sluice.enqueueBatch(Array.from({ length: JOBS }, (_, n) => ({ name: 'locker', payload: { n } })));
    await withWorker(
      sluice,
      [locker],
      { concurrency: 10, heartbeatIntervalMs: 100, lockTimeoutMs: 30_000 },
      async () => {
        await waitFor(() => events['job:completed'].length === JOBS, {
          what: `${JOBS} jobs completed`,
          timeoutMs: 30_000,
        });
      },
    );
    expect(events['claim:lost']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    expect(events['worker:error']).toEqual([]);
    expect(new Set(events['job:completed'].map((e) => e.jobId)).size).toBe(JOBS);
  });
});
