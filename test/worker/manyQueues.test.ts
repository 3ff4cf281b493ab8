import { describe, expect, it } from 'vitest';
import { defineJob, OptionsError } from '../../src/index.ts';
import { resolveWorkerOptions } from '../../src/worker/workerOptions.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { openRecorded, withWorker } from '../helpers/workerHarness.ts';

/**
 * A worker on many queues (src/worker/WideQueues.ts): more names than it claims in turn, or a
 * pattern (`tenant-*`, `*`). Real workers on the real server.
 */
const db = useTestDatabase('many_queues');

/** A job that records which queue it ran on, in start order. */
function recorder(): { job: ReturnType<typeof defineJob>; ran: string[] } {
  const ran: string[] = [];
  return { ran, job: defineJob({ name: 'note', handle: (_p, ctx) => void ran.push(ctx.job.queue) }) };
}

const names = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

async function liveQueues(): Promise<string[]> {
  const rows = await db.sluice.knex('sluice_jobs').distinct('queue').orderBy('queue');
  return rows.map((r: { queue: string }) => r.queue);
}

describe('a worker on many queues', () => {
  it('a worker on 1,000 queue names drains a job of each', async () => {
    const { sluice, events } = openRecorded(db);
    const queues = names('q-', 1_000);
    await sluice.enqueueBatch(queues.map((queue) => ({ name: 'note', queue, payload: {} })));
    const { job, ran } = recorder();
    await withWorker(sluice, [job], { queues, concurrency: 20 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: '1,000 queues drained' });
    });
    expect(new Set(ran).size).toBe(1_000);
    expect(events['worker:error']).toEqual([]);
    // A claim spans queues: its completion deletes every queue's rows, never takes them for lost.
    expect(events['claim:lost']).toEqual([]);
  });

  it("a worker on '*' gives back a job it has no handler for, no attempt spent", async () => {
    const { sluice, events } = openRecorded(db);
    await sluice.enqueueBatch([
      { name: 'ghost', queue: 'tenant-a', payload: {} },
      ...names('tenant-b', 3).map((queue) => ({ name: 'note', queue, payload: {} })),
    ]);
    const { job, ran } = recorder();
    await withWorker(sluice, [job], { queues: '*', concurrency: 5, maxPollIntervalMs: 60_000 }, async () => {
      await waitFor(async () => ran.length === 3, { what: 'the known jobs to run' });
      await waitFor(async () => (events['job:unknown'] ?? []).length > 0, { what: 'the ghost given back' });
    });
    const [ghost] = await db.query<{ retry_times: number; lock_id: string }>(
      "SELECT retry_times, lock_id FROM sluice_jobs WHERE name = 'ghost'",
    );
    expect(ghost).toEqual({ retry_times: 0, lock_id: '' });
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    expect(events['job:failed'] ?? []).toEqual([]);
  });

  it('a claim across queues whose jobs all finish together completes each of them', async () => {
    const { sluice, events } = openRecorded(db);
    const queues = names('w-', 20);
    await sluice.enqueueBatch(queues.map((queue) => ({ name: 'together', queue, payload: {} })));
    let started = 0;
    let release: () => void = () => undefined;
    const all = new Promise<void>((resolve) => {
      release = resolve;
    });
    const together = defineJob({
      name: 'together',
      handle: async () => {
        if (++started === queues.length) release();
        await all;
      },
    });
    // The completion's slow path: held rows its one statement left, looked up and locked.
    let slowPaths = 0;
    const deletes: string[] = [];
    sluice.knex.on('query', (q: { sql: string }) => {
      if (/SELECT id, flags, queue, group_key[\s\S]*FOR UPDATE/.test(q.sql)) slowPaths++;
      if (/^\s*DELETE FROM `sluice_jobs`/.test(q.sql)) deletes.push(q.sql);
    });
    await withWorker(sluice, [together], { queues, concurrency: 20 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the 20 queues drained' });
    });
    // One statement deletes them all: by their queues' ix_head ranges (not a list of ids, nor as the
    // first queue's whole claim).
    expect(slowPaths).toBe(0);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toMatch(/WHERE queue IN \(\?\)\s+AND lock_id = \?/);
    expect(events['claim:lost']).toEqual([]);
    expect(events['job:completed']).toHaveLength(20);
  });

  it("a worker on 'tenant-*' drains the tenant queues and leaves the others", async () => {
    const { sluice, events } = openRecorded(db);
    const tenants = names('tenant-', 300);
    const others = ['other', 'tenant', 'tenantx', 'tenant_0001', 'zzz'];
    await sluice.enqueueBatch([...tenants, ...others].map((queue) => ({ name: 'note', queue, payload: {} })));
    const { job, ran } = recorder();
    await withWorker(sluice, [job], { queues: 'tenant-*', concurrency: 20 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === others.length, {
        what: 'the tenant queues drained',
      });
      // A job enqueued while it runs (in this process: the in-process ring) is claimed too.
      await sluice.enqueue({ name: 'note', queue: 'tenant-late', payload: {} });
      await waitFor(() => ran.includes('tenant-late'), { what: 'the late tenant job run' });
    });
    expect(new Set(ran)).toEqual(new Set([...tenants, 'tenant-late']));
    expect(await liveQueues()).toEqual([...others].sort());
    expect(events['worker:error']).toEqual([]);
    await db.sluice.knex('sluice_jobs').delete();
  });

  it("a worker on '*' drains every queue", async () => {
    const { sluice } = openRecorded(db);
    const queues = ['a', 'default', 'tenant-1', 'Z', 'zzz', ...names('x-', 50)];
    await sluice.enqueueBatch(queues.map((queue) => ({ name: 'note', queue, payload: {} })));
    const { job, ran } = recorder();
    await withWorker(sluice, [job], { queues: ['*'], concurrency: 10 }, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'every queue drained' });
    });
    expect(new Set(ran)).toEqual(new Set(queues));
  });

  it('a queue with one job is not starved by a queue with a deep backlog', async () => {
    const { sluice } = openRecorded(db);
    await sluice.enqueueBatch(Array.from({ length: 3_000 }, () => ({ name: 'note', queue: 'deep', payload: {} })));
    await sluice.enqueue({ name: 'note', queue: 'shallow', payload: {} });
    const { job, ran } = recorder();
    const claimBatchSize = 20;
    await withWorker(sluice, [job], { queues: '*', concurrency: 20, claimBatchSize }, async () => {
      await waitFor(() => ran.includes('shallow'), { what: 'the shallow queue’s job run' });
    });
    // Its job is in the worker's first claim: the claim shares itself out across the queues with work.
    expect(ran.indexOf('shallow')).toBeLessThan(claimBatchSize);
    await db.sluice.knex('sluice_jobs').delete();
  });

  it('a worker that passed through its queues claims on from them without scanning again', async () => {
    const { sluice } = openRecorded(db);
    const queues = names('r-', 200);
    await sluice.enqueueBatch(
      queues.flatMap((queue) => Array.from({ length: 5 }, () => ({ name: 'count', queue, payload: {} }))),
    );
    let scans = 0;
    sluice.knex.on('query', (q: { sql: string }) => {
      if (/GROUP BY queue, lock_id, priority/.test(q.sql)) scans++;
    });
    let ran = 0;
    let scansWhileWork = 0;
    const count = defineJob({
      name: 'count',
      handle: () => {
        if (++ran === 1_000) scansWhileWork = scans;
      },
    });
    // Claims of 10 across 10 queues take 2 jobs of each: three passes through the 200 queues.
    const options = { queues, concurrency: 10, claimBatchSize: 10, pollIntervalMs: 60_000 };
    await withWorker(sluice, [count], options, async () => {
      await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the 200 queues drained' });
    });
    expect(ran).toBe(1_000);
    // The first scan (and one more if the enqueue's ring came after it): none at the end of a pass.
    expect(scansWhileWork).toBeGreaterThanOrEqual(1);
    expect(scansWhileWork).toBeLessThanOrEqual(2);
  });

  it('a job that falls due while the worker restarts its list is claimed then, not at the next poll', async () => {
    const { sluice } = openRecorded(db);
    const queues = names('t-', 10);
    // A deep queue that keeps the list going for seconds, and a job due 300 ms from now elsewhere.
    await sluice.enqueueBatch(Array.from({ length: 600 }, () => ({ name: 'slow', queue: 't-0000', payload: {} })));
    const enqueuedAt = Date.now();
    await sluice.enqueue({ name: 'slow', queue: 't-0005', payload: {}, delayMs: 300 });
    let startedLate: number | null = null;
    const slow = defineJob({
      name: 'slow',
      handle: async (_p, ctx) => {
        if (ctx.job.queue === 't-0005') startedLate = Date.now() - enqueuedAt;
        await new Promise((resolve) => setTimeout(resolve, 10));
      },
    });
    const options = { queues, concurrency: 2, claimBatchSize: 2, pollIntervalMs: 60_000 };
    await withWorker(sluice, [slow], options, async () => {
      await waitFor(() => startedLate !== null, { what: 'the delayed job started', timeoutMs: 20_000 });
    });
    // Before, the list of the first scan (where it was not yet due) went round until the poll.
    expect(startedLate).toBeLessThan(2_000);
    await db.sluice.knex('sluice_jobs').delete();
  });

  it("a worker on '*' keeps a capped queue to its cap and leaves a paused queue", async () => {
    const { sluice, events } = openRecorded(db);
    await sluice.queues.setLimits('capped', { concurrency: 1 });
    await sluice.queues.pause('stopped');
    const free = names('f-', 20);
    await sluice.enqueueBatch(
      [...free, ...Array<string>(10).fill('capped'), 'stopped'].map((queue) => ({ name: 'slow', queue, payload: {} })),
    );
    let running = 0;
    let most = 0;
    const done: string[] = [];
    const slow = defineJob({
      name: 'slow',
      handle: async (_p, ctx) => {
        if (ctx.job.queue === 'capped') most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (ctx.job.queue === 'capped') running--;
        done.push(ctx.job.queue);
      },
    });
    await withWorker(sluice, [slow], { queues: '*', concurrency: 10 }, async () => {
      await waitFor(() => done.length === free.length + 10, { what: 'the free and capped queues drained' });
    });
    expect(most).toBe(1);
    expect(await liveQueues()).toEqual(['stopped']);
    expect(events['worker:error']).toEqual([]);
    await sluice.queues.resume('stopped');
    await sluice.queues.setLimits('capped', { concurrency: null });
    await db.sluice.knex('sluice_jobs').delete();
  });

  it('refuses a bad pattern or too many entries at the call, naming the option', () => {
    for (const queues of ['ten*ant', '**', 'a b*', '*x', '', [], names('q-', 1_001)]) {
      let caught: unknown;
      try {
        resolveWorkerOptions({ queues });
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(queues).slice(0, 40)).toBeInstanceOf(OptionsError);
      expect((caught as OptionsError).message).toContain('queues');
    }
    expect(resolveWorkerOptions({ queues: 'tenant-*' }).queues).toEqual(['tenant-*']);
    expect(resolveWorkerOptions({ queues: ['*', 'a'] }).queues).toEqual(['*', 'a']);
  });
});
