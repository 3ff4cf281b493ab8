import { afterEach, describe, expect, it } from 'vitest';
import { defineJob } from '../src/index.ts';
import { workerKeyOf } from '../src/model/claimKey.ts';
import { countRows } from './helpers/factory.ts';
import { useTestDatabase } from './helpers/testDatabase.ts';
import { waitFor } from './helpers/waitFor.ts';
import { recordEvents, withWorker } from './helpers/workerHarness.ts';

/**
 * README "Events": typed events with sensible payloads for the life of a batch, its jobs, the
 * worker and the maintenance process; a throwing listener never breaks the queue.
 */
const db = useTestDatabase('sem_events');

const warnings: Error[] = [];
const onWarning = (warning: Error) => warnings.push(warning);

afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('events', () => {
  it('fire with their payloads through a batch’s life: enqueue, claim, complete, fail, retry, die, finish, maintenance', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const flaky = defineJob({
      name: 'flaky',
      maxRetries: 1,
      backoff: { type: 'fixed', delayMs: 1 },
      handle: () => {
        throw new Error('nope');
      },
    });

    const { batchId } = await sluice.enqueueBatch(
      [
        { name: 'ok', queue: 'ev' },
        { name: 'ok', queue: 'ev' },
        { name: 'flaky', queue: 'ev' },
      ],
      {
        onComplete: { name: 'done', queue: 'reports' },
      },
    );
    expect(events['batch:enqueued']).toEqual([{ batchId, count: 3, chunks: 1, durationMs: expect.any(Number) }]);

    let workerId = '';
    await withWorker(sluice, [ok, flaky], { queues: ['ev'], concurrency: 4, claim: 'skip-locked' }, async (worker) => {
      workerId = worker.id;
      await waitFor(() => events['job:dead'].length === 1 && events['job:completed'].length === 2, {
        what: 'the batch’s jobs finished',
      });
    });
    const [flakyJob] = await db.query<{ id: number }>("SELECT id FROM sluice_dead_jobs WHERE name = 'flaky'");
    const flakyId = Number(flakyJob?.id);

    expect(events['worker:started']).toEqual([
      { workerId, queues: ['ev'], concurrency: 4, strategy: 'skip-locked', jobsFolder: null, jobs: ['ok', 'flaky'] },
    ]);
    expect(events['job:claimed'].length).toBeGreaterThanOrEqual(2);
    for (const e of events['job:claimed']) {
      expect(e).toEqual({
        workerId,
        lockId: expect.stringMatching(new RegExp(`^${workerKeyOf(workerId)}\\.`)),
        queue: 'ev',
        count: expect.any(Number),
        strategy: 'skip-locked',
      });
    }
    expect(events['job:claimed'].reduce((n, e) => n + e.count, 0)).toBe(4); // 3 jobs + 1 retry
    expect(events['job:completed'].map((e) => ({ ...e, durationMs: typeof e.durationMs }))).toEqual([
      { workerId, jobId: expect.any(Number), name: 'ok', queue: 'ev', durationMs: 'number' },
      { workerId, jobId: expect.any(Number), name: 'ok', queue: 'ev', durationMs: 'number' },
    ]);
    expect(events['job:failed']).toEqual([
      {
        workerId,
        jobId: flakyId,
        name: 'flaky',
        queue: 'ev',
        error: expect.objectContaining({ message: 'nope' }),
        attempt: 1,
      },
      {
        workerId,
        jobId: flakyId,
        name: 'flaky',
        queue: 'ev',
        error: expect.objectContaining({ message: 'nope' }),
        attempt: 2,
      },
    ]);
    expect(events['job:retried']).toEqual([{ workerId, jobId: flakyId, name: 'flaky', delayMs: 1, retryTimes: 1 }]);
    expect(events['job:dead']).toEqual([
      { workerId, jobId: flakyId, name: 'flaky', queue: 'ev', error: expect.objectContaining({ message: 'nope' }) },
    ]);
    // job:dead carries its error as job:failed does: the last attempt's Error itself.
    expect(events['job:dead'][0]?.error).toBeInstanceOf(Error);
    expect(events['job:dead'][0]?.error).toBe(events['job:failed'][1]?.error);
    expect(events['worker:stopping']).toEqual([{ workerId, inFlight: 0 }]);
    expect(events['worker:stopped']).toEqual([{ workerId, released: 0, processed: 4 }]);

    const maintainer = sluice.maintenance({ jitterMs: 0 });
    await maintainer.runOnce();
    expect(events['leader:acquired']).toEqual([{ holder: maintainer.holder, lease: 'maintenance' }]);
    expect(events['batch:finished']).toEqual([{ holder: maintainer.holder, batchId, completionJob: true }]);
    expect(events['maintenance:completed']).toEqual([
      {
        holder: maintainer.holder,
        leader: true,
        changed: 1,
        tasks: {
          fireSchedules: { fired: 0, advanced: 0 },
          releaseDeadWorkers: { workers: 0, claims: 0, deadLettered: 0 },
          releaseStaleClaims: { claims: 0, deadLettered: 0 },
          reconcileHolds: { settled: 0, released: 0, cancelled: 0 },
          reconcileGroups: { recounted: 0, released: 0 },
          finishBatches: { batches: 1 },
          pruneIdempotencyKeys: { orphansExpired: 0, pruned: 0 },
          pruneDebounces: { pruned: 0 },
          pruneGroupMembers: { pruned: 0 },
          pruneHistory: { pruned: 0 },
          pruneDeadJobs: { pruned: 0 },
          pruneProgress: { pruned: 0 },
          pruneGraphHistory: { pruned: 0 },
          checkQueues: { broken: 0, kept: 0 },
          pruneJobErrors: { pruned: 0 },
          pruneJobLogs: { pruned: 0 },
          pruneTraceContexts: { pruned: 0 },
        },
        behind: [],
        durationMs: expect.any(Number),
      },
    ]);
    await maintainer.stop();
    expect(events['leader:lost']).toEqual([{ holder: maintainer.holder, lease: 'maintenance', released: true }]);
    expect(events['worker:error']).toEqual([]);
    expect(events['maintenance:error']).toEqual([]);
    expect(events['claim:lost']).toEqual([]);
  });

  it('a maintainer that does not hold the lease reports maintenance:completed with leader false and no leader:acquired', async () => {
    const leaderSluice = db.open();
    const otherSluice = db.open();
    const leaderEvents = recordEvents(leaderSluice);
    const otherEvents = recordEvents(otherSluice);
    const leader = leaderSluice.maintenance({ jitterMs: 0 });
    const other = otherSluice.maintenance({ jitterMs: 0 });
    expect(await leader.runOnce()).toMatchObject({ leader: true });
    expect(await other.runOnce()).toMatchObject({ leader: false });
    expect(leaderEvents['leader:acquired']).toHaveLength(1);
    expect(otherEvents['leader:acquired']).toEqual([]);
    expect(otherEvents['maintenance:completed']).toEqual([
      expect.objectContaining({ holder: other.holder, leader: false, changed: 0, tasks: {} }),
    ]);
    await Promise.all([leader.stop(), other.stop()]);
  });

  it('a listener that throws does not break processing; it is reported as a process warning', async () => {
    process.on('warning', onWarning);
    const sluice = db.open();
    const events = recordEvents(sluice);
    for (const name of ['job:claimed', 'job:completed', 'batch:enqueued', 'worker:started'] as const) {
      sluice.events.on(name, () => {
        throw new Error(`listener of ${name} is broken`);
      });
    }
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const { count } = await sluice.enqueueBatch(Array.from({ length: 5 }, () => ({ name: 'ok' })));
    expect(count).toBe(5);
    await withWorker(sluice, [ok], {}, () =>
      waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'all 5 jobs done' }),
    );
    // Listeners registered after the broken ones still heard everything.
    await waitFor(() => events['job:completed'].length === 5, { what: '5 job:completed' });
    expect(events['worker:error']).toEqual([]);
    expect(events['job:failed']).toEqual([]);
    await waitFor(() => warnings.some((w) => /listener of job:completed threw/.test(w.message)), {
      what: 'the warning',
    });
    expect(warnings.some((w) => /listener of batch:enqueued threw/.test(w.message))).toBe(true);
  });
});
