import { describe, expect, it } from 'vitest';
import { defineJob, PermanentJobError } from '../../src/index.ts';
import { ago, fromNow, HOUR, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Jobs": `sluice.jobs.get(id)` finds a job wherever it is — waiting, delayed, retrying,
 * running (with its holder from the worker registry), completed (with its result), cancelled,
 * dead — with one primary-key lookup per table, or null.
 */
const db = useTestDatabase('jobs_get');

describe('jobs.get', () => {
  it('tells waiting, delayed and retrying jobs apart on the DB clock, with every column', async () => {
    const waiting = await insertJob(db, { queue: 'q', name: 'a', payload: { n: 1 }, priority: 3, runAt: ago(MINUTE) });
    const delayed = await insertJob(db, { queue: 'q', name: 'a', runAt: fromNow(HOUR), idempotencyKey: 'k-1' });
    const retrying = await insertJob(db, {
      queue: 'q',
      name: 'a',
      runAt: fromNow(HOUR),
      retryTimes: 2,
      maxRetries: 5,
      lastError: 'Error: boom\n    at x',
    });
    const dueRetry = await insertJob(db, { queue: 'q', name: 'a', runAt: ago(1), retryTimes: 1 });
    const jobs = db.sluice.jobs;

    expect(await jobs.get(waiting)).toMatchObject({
      id: waiting,
      state: 'waiting',
      queue: 'q',
      name: 'a',
      payload: { n: 1 },
      priority: 3,
      retryTimes: 0,
      maxRetries: null,
      lock: null,
      lastError: null,
      progress: null,
      result: undefined,
      runAt: expect.any(Date),
      createdAt: expect.any(Date),
      finishedAt: null,
    });
    expect(await jobs.get(delayed)).toMatchObject({ state: 'delayed', idempotencyKey: 'k-1' });
    expect(await jobs.get(retrying)).toMatchObject({
      state: 'retrying',
      retryTimes: 2,
      maxRetries: 5,
      lastError: 'Error: boom\n    at x',
    });
    // Its backoff is over: it waits in line like any other due job.
    expect(await jobs.get(dueRetry)).toMatchObject({ state: 'waiting', retryTimes: 1 });
    expect(await jobs.get(999_999)).toBeNull();
  });

  it('shows a running job with its holder (host, pid, worker id from the registry) and its progress', async () => {
    const sluice = db.open();
    const release = deferred();
    const started = deferred();
    const slow = defineJob({
      name: 'slow',
      async handle(_payload, ctx) {
        ctx.progress({ done: 1, of: 4 });
        ctx.progress({ done: 2, of: 4 }); // only the latest is written
        started.resolve();
        await release.promise;
        return { rows: 4 };
      },
    });
    const { id } = await sluice.enqueue({ name: 'slow', queue: 'g' });
    await withWorker(
      sluice,
      [slow],
      { queues: ['g'], heartbeatIntervalMs: 100, lockTimeoutMs: 30_000 },
      async (worker) => {
        await started.promise;
        const running = await waitFor(
          async () => {
            const job = await sluice.jobs.get(id);
            return job?.progress ? job : undefined;
          },
          { what: 'progress written by a heartbeat' },
        );
        expect(running).toMatchObject({
          state: 'running',
          progress: { value: { done: 2, of: 4 }, at: expect.any(Date) },
          lock: {
            workerId: worker.id,
            pid: process.pid,
            lockedAt: expect.any(Date),
            heartbeatAt: expect.any(Date),
          },
        });
        expect(running.lock?.lockId.startsWith(`${worker.id.slice(worker.id.lastIndexOf('~') + 1)}.`)).toBe(true);
        expect(running.lock?.host?.length).toBeGreaterThan(0);
        release.resolve();
        await waitFor(async () => (await sluice.jobs.get(id))?.state === 'completed', { what: 'completed' });
      },
    );
    expect(await sluice.jobs.get(id)).toMatchObject({
      state: 'completed',
      result: { rows: 4 },
      lock: null,
      runAt: null,
      startedAt: expect.any(Date),
      finishedAt: expect.any(Date),
      // the last progress stays visible with the finished job
      progress: { value: { done: 2, of: 4 } },
    });
  });

  it('shows a dead job with its last error, and a re-driven one with its new id', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const doomed = defineJob({
      name: 'doomed',
      handle() {
        throw new PermanentJobError('no such account');
      },
    });
    const { id } = await sluice.enqueue({ name: 'doomed', queue: 'd', payload: { account: 7 } });
    await withWorker(sluice, [doomed], { queues: ['d'] }, () =>
      waitFor(() => events['job:dead'].length === 1, { what: 'job:dead' }),
    );
    const dead = await sluice.jobs.get(id);
    expect(dead).toMatchObject({
      state: 'dead',
      payload: { account: 7 },
      finishedAt: expect.any(Date),
      redrivenAs: null,
    });
    expect(dead?.lastError).toContain('PermanentJobError: no such account');

    await sluice.deadJobs.redrive({ ids: [id] });
    const redriven = await sluice.jobs.get(id);
    expect(redriven?.state).toBe('dead');
    expect(await sluice.jobs.get(redriven?.redrivenAs as number)).toMatchObject({ state: 'waiting', queue: 'd' });
  });

  it('reads one primary-key row per table (and probes job_errors and job_logs by primary key), in one statement', async () => {
    const id = await insertJob(db, {});
    const statements: string[] = [];
    const sluice = db.open();
    sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    await sluice.jobs.get(id);
    expect(statements).toHaveLength(1);
    const [plan] = await db.query<Record<string, unknown>>(`EXPLAIN ${statements[0]}`, [id, id, id]);
    expect(plan).toBeDefined();
    const rows = await db.query<{ table: string; type: string; key: string | null }>(`EXPLAIN ${statements[0]}`, [
      id,
      id,
      id,
    ]);
    for (const row of rows.filter((r) => r.table && !r.table.startsWith('<'))) {
      // job_errors and job_logs: a prefix (job_id) of their primary keys; job_edges: its primary
      // key's prefix or ix_child; job_graph_history: its primary key's prefix (kc) or ix_parent (kp).
      const keys: Record<string, string> = {
        e: 'PRIMARY',
        l: 'PRIMARY',
        ep: 'PRIMARY',
        ec: 'ix_child',
        kc: 'PRIMARY',
        kp: 'ix_parent',
      };
      const probe = keys[row.table];
      expect(probe ? ['ref'] : ['const', 'eq_ref', 'system'], JSON.stringify(row)).toContain(row.type);
      if (probe) expect(row.key).toBe(probe);
    }
  });
});
