import { describe, expect, it } from 'vitest';
import { createSluice, defineJob } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { startTcpProxy } from '../helpers/tcpProxy.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { deferred, recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('server_outage');

describe('the server unreachable while jobs finish', () => {
  it('completions are written once it answers again, long before the lock timeout: each job runs once', async () => {
    const proxy = await startTcpProxy(db.url);
    const sluice = createSluice({ url: proxy.url, logger: testLogger });
    const gate = deferred();
    const started: number[] = [];
    const finished: number[] = [];
    const work = defineJob({
      name: 'work',
      async handle(_payload, ctx) {
        started.push(ctx.job.id);
        await gate.promise;
        finished.push(ctx.job.id);
      },
    });
    const events = recordEvents(sluice);
    const JOBS = 20;
    await sluice.enqueueBatch(Array.from({ length: JOBS }, () => ({ name: 'work' })));
    try {
      await withWorker(sluice, [work], { concurrency: JOBS, lockTimeoutMs: 60_000 }, async () => {
        await waitFor(async () => (await countRows(db, 'sluice_jobs', "lock_id <> ''")) === JOBS, {
          what: 'every job claimed',
        });
        // A claim's commit can land before its rows reach the worker: cut only once every
        // handler holds its job, or a claim lost in flight waits out the lock timeout.
        await waitFor(() => started.length === JOBS, { what: 'every handler started' });
        // The server goes away just as the handlers finish, for two seconds.
        proxy.cut();
        gate.resolve();
        await waitFor(() => finished.length === JOBS, { what: 'handlers finished' });
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        proxy.restore();
        await waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, {
          what: 'the jobs completed after the outage',
          timeoutMs: 15_000,
        });
      });
    } finally {
      await sluice.close();
      await proxy.close();
    }
    expect(events['job:completed']).toHaveLength(JOBS);
    expect(finished).toHaveLength(JOBS);
    expect(await countRows(db, 'sluice_job_history', 'retry_times = 0')).toBe(JOBS);
  });
});
