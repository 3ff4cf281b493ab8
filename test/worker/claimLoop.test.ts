import { describe, expect, it } from 'vitest';
import { type Executor, fromKnex } from '../../src/db/executor.ts';
import { SluiceEvents } from '../../src/events.ts';
import type { JobRow } from '../../src/model/job.ts';
import type { SluiceRuntime } from '../../src/sluiceRuntime.ts';
import { ClaimLoop, type ClaimLoopHost } from '../../src/worker/ClaimLoop.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import type { CompletionBuffer } from '../../src/worker/CompletionBuffer.ts';
import { ConcurrencyLimit } from '../../src/worker/ConcurrencyLimit.ts';
import { WorkerEvents } from '../../src/worker/WorkerEvents.ts';
import { resolveWorkerOptions } from '../../src/worker/workerOptions.ts';
import { fromNow, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * The claim loop's waits (src/worker/ClaimLoop.ts), with a real executor: a ring is never slept
 * through. The loop polls once a minute here, so a job claimed within seconds was claimed because
 * of the ring.
 */
const db = useTestDatabase('claim_loop');

/** The executor, calling `during(sql)` while a SELECT is on the server (before its rows return). */
function watched(inner: Executor, during: (sql: string) => Promise<void>): Executor {
  return {
    ...inner,
    async select<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      const rows = await inner.select<T>(sql, params);
      await during(sql);
      return rows;
    },
    write: (sql, params) => inner.write(sql, params),
  };
}

/** A ClaimLoop over `exec`, polling once a minute, with `host` as its worker. */
function loopOver(exec: Executor, host: ClaimLoopHost): ClaimLoop {
  const options = resolveWorkerOptions({ queues: ['q'], pollIntervalMs: MINUTE, maxPollIntervalMs: MINUTE });
  const runtime = { workerDb: exec, prefetchDb: null, tables: db.sluice.tables } as unknown as SluiceRuntime;
  return new ClaimLoop(
    runtime,
    options,
    new ClaimTokens(),
    new ConcurrencyLimit(options.concurrency, options.loadPolicy, () => undefined),
    { backlog: 0 } as unknown as CompletionBuffer,
    new WorkerEvents(new SluiceEvents(), 'w-test'),
    host,
  );
}

describe('ClaimLoop', () => {
  it('a ring that comes while the idle worker reads the next due time is not slept through', async () => {
    // A delayed job, so that each empty round reads the queue's next run_at before it sleeps.
    await insertJob(db, { queue: 'q', runAt: fromNow(10 * MINUTE) });
    const claimed: JobRow[] = [];
    let loop: ClaimLoop | undefined;
    let armed = true;
    const exec = watched(fromKnex(db.sluice.knex), async (sql) => {
      if (!armed || !sql.includes('due_in_ms')) return;
      armed = false;
      // A job commits and its ring arrives just as the worker is deciding how long to sleep.
      await insertJob(db, { queue: 'q', name: 'now' });
      loop?.ring();
    });
    let running = true;
    loop = loopOver(exec, {
      claiming: () => running,
      inFlight: () => 0,
      processed: () => 0,
      shed: () => undefined,
      fairIdleCapMs: () => null,
      knows: () => true,
      run: (row) => claimed.push(row),
    });
    const done = loop.run();
    try {
      await waitFor(() => claimed.length === 1, { timeoutMs: 10_000, what: 'the rung job claimed' });
      expect(claimed[0]?.name).toBe('now');
      expect(armed).toBe(false);
    } finally {
      running = false;
      loop.wake();
      await done;
    }
  });

  it('a job that falls due between the empty claim and the next-due read is claimed at once, not a poll later', async () => {
    const id = await insertJob(db, { queue: 'q', runAt: fromNow(10 * MINUTE) });
    const claimed: JobRow[] = [];
    let armed = true;
    const exec = watched(fromKnex(db.sluice.knex), async (sql) => {
      if (!armed || !sql.includes('ORDER BY priority, run_at, id')) return;
      armed = false;
      // The head read found nothing due; the job's run_at comes before the worker reads the next one
      // (what a run_at in the same millisecond as the claim does). It was read as "due already, not
      // ours" and slept through a whole poll: 3.5 s late in a bench run.
      await db.query('UPDATE sluice_jobs SET run_at = NOW(3) WHERE id = ?', [id]);
    });
    let running = true;
    const loop = loopOver(exec, {
      claiming: () => running,
      inFlight: () => 0,
      processed: () => 0,
      shed: () => undefined,
      fairIdleCapMs: () => null,
      knows: () => true,
      run: (row) => claimed.push(row),
    });
    const done = loop.run();
    try {
      await waitFor(() => claimed.length === 1, { timeoutMs: 10_000, what: 'the job that fell due claimed' });
      expect(Number(claimed[0]?.id)).toBe(id);
    } finally {
      running = false;
      loop.wake();
      await done;
    }
  });

  it('due jobs it cannot claim (a paused queue) cost one extra round per poll, not a busy loop', async () => {
    await insertJob(db, { queue: 'q' });
    await db.sluice.queues.pause('q');
    let heads = 0;
    const exec = watched(fromKnex(db.sluice.knex), async (sql) => {
      if (sql.includes('ORDER BY priority, run_at, id')) heads++;
    });
    let running = true;
    const loop = loopOver(exec, {
      claiming: () => running,
      inFlight: () => 0,
      processed: () => 0,
      shed: () => undefined,
      fairIdleCapMs: () => null,
      knows: () => true,
      run: () => undefined,
    });
    const done = loop.run();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // The first round, its re-check, and then the minute's poll: at most two rounds (each
      // reading the head once, and once more after refreshing the queue's priorities).
      expect(heads).toBeGreaterThan(0);
      expect(heads).toBeLessThanOrEqual(4);
    } finally {
      running = false;
      loop.wake();
      await done;
      await db.sluice.queues.resume('q');
    }
  });

  it('a stop that comes while the idle worker reads the next due time ends the loop at once, not a poll later', async () => {
    await insertJob(db, { queue: 'q', runAt: fromNow(10 * MINUTE) });
    let loop: ClaimLoop | undefined;
    let running = true;
    let armed = true;
    const exec = watched(fromKnex(db.sluice.knex), async (sql) => {
      if (!armed || !sql.includes('due_in_ms')) return;
      armed = false;
      // Worker.stop(): claiming ends and the loop is woken, just as it decides how long to sleep.
      running = false;
      loop?.wake();
    });
    loop = loopOver(exec, {
      claiming: () => running,
      inFlight: () => 0,
      processed: () => 0,
      shed: () => undefined,
      fairIdleCapMs: () => null,
      knows: () => true,
      run: () => undefined,
    });
    let ended = false;
    const done = loop.run().then(() => {
      ended = true;
    });
    try {
      await waitFor(() => !armed, { timeoutMs: 10_000, what: 'the next-due read' });
      await waitFor(() => ended, { timeoutMs: 5_000, what: 'the loop ended by the stop (not after the minute poll)' });
    } finally {
      running = false;
      loop.wake();
      await done;
    }
  });
});
