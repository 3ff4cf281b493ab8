import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { defineJob, OptionsError } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('pool_starvation');

describe('more jobs at once than connections in the pool', () => {
  it('handlers holding every connection do not starve the heartbeat: no claim expires, each job runs once', async () => {
    // 12 jobs at once on a 3-connection pool, each handler holding a connection for 1.5 s: the
    // handlers queue for connections for several lock timeouts, while the maintenance process
    // releases any claim not extended within 1.2 s.
    const hold = defineJob({
      name: 'hold',
      async handle(_payload, ctx) {
        await ctx.knex.transaction(async (trx) => {
          await trx.raw('SELECT 1');
          await sleep(1_500);
        });
      },
    });
    const sluice = db.open({ poolMax: 3 });
    const events = recordEvents(sluice);
    const JOBS = 12;
    await sluice.enqueueBatch(Array.from({ length: JOBS }, () => ({ name: 'hold' })));
    const maintenance = db.open().maintenance({ lockTimeoutMs: 1_200, jitterMs: 0, missedHeartbeats: 3 });
    let passes = 0;
    let stop = false;
    const sweeping = (async () => {
      while (!stop) {
        await maintenance.runOnce();
        passes++;
        await sleep(200);
      }
    })();
    try {
      await withWorker(sluice, [hold], { concurrency: JOBS, lockTimeoutMs: 1_200, heartbeatIntervalMs: 300 }, () =>
        waitFor(() => events['job:completed'].length === JOBS, { what: `${JOBS} jobs completed`, timeoutMs: 60_000 }),
      );
    } finally {
      stop = true;
      await sweeping;
      await maintenance.stop();
    }
    expect(passes).toBeGreaterThan(5);
    expect(events['claim:lost']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    expect(new Set(events['job:completed'].map((e) => e.jobId)).size).toBe(JOBS);
    const [history] = await db.query<{ n: number; retried: number }>(
      'SELECT COUNT(*) AS n, SUM(retry_times > 0) AS retried FROM sluice_job_history',
    );
    expect({ n: Number(history?.n), retried: Number(history?.retried) }).toEqual({ n: JOBS, retried: 0 });
  });

  it('exactly-once jobs need a connection each: a pool smaller than the concurrency is refused at start', async () => {
    const tx = defineJob({ name: 'tx', delivery: 'exactly-once', handle() {} });
    const worker = db.open({ poolMax: 5 }).worker({ concurrency: 20, jobs: [tx] });
    const error = await worker.start().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as Error).message).toMatch(/exactly-once jobs \(tx\).*pool has 5: raise poolMax .* to at least 20/);
  });
});
