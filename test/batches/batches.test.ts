import { describe, expect, it } from 'vitest';
import { finishBatches } from '../../src/batches/finishBatches.ts';
import { fromKnex } from '../../src/db/executor.ts';
import { defineJob, type JobSpec, JobValidationError, type Sluice } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Batches": batch() reports size / pending / succeeded / dead / finishedAt, counted from
 * the batch_id indexes; the maintenance pass marks a batch finished once all its jobs are done
 * and enqueues its onComplete job exactly once, however many maintainers run.
 */
const db = useTestDatabase('sem_batches');

interface CompletionRow {
  id: number;
  queue: string;
  name: string;
  payload: string;
  priority: number;
  max_retries: number | null;
  batch_id: number | null;
}

async function completionJobs(
  name = 'report',
): Promise<(Omit<CompletionRow, 'payload'> & { payload: Record<string, unknown> })[]> {
  const rows = await db.query<CompletionRow>(
    'SELECT id, queue, name, payload, priority, max_retries, batch_id FROM sluice_jobs WHERE name = ? ORDER BY id',
    [name],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), payload: JSON.parse(r.payload) as Record<string, unknown> }));
}

/** Moves some live jobs of a batch to dead_jobs and deletes the others, as finished workers would. */
async function finishByHand(batchId: number, dead: number): Promise<void> {
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, batch_id, last_error, created_at, failed_at)
     SELECT id, queue, name, payload, priority, 1, 0, batch_id, 'failed by the test', created_at, NOW(3)
     FROM sluice_jobs WHERE batch_id = ? ORDER BY id LIMIT ?`,
    [batchId, dead],
  );
  await db.query('DELETE FROM sluice_jobs WHERE batch_id = ?', [batchId]);
}

describe('a batch with onComplete', () => {
  it('reports its progress, and once its jobs finished the maintenance pass enqueues the completion job with the counts, once', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const ok = defineJob({ name: 'ok', handle: () => undefined });
    const bad = defineJob({
      name: 'bad',
      maxRetries: 0,
      handle: () => {
        throw new Error('always');
      },
    });
    const jobs: JobSpec[] = [
      { name: 'ok', queue: 'work', payload: { n: 1 } },
      { name: 'bad', queue: 'work', payload: { n: 2 } },
      { name: 'ok', queue: 'work', payload: { n: 3 } },
      { name: 'ok', queue: 'work', payload: { n: 4 } },
    ];
    const { batchId, count } = await sluice.enqueueBatch(jobs, {
      onComplete: { name: 'report', queue: 'reports', priority: -5, maxRetries: 7, payload: { reportId: 42 } },
    });
    expect(count).toBe(4);
    const id = batchId as number;
    expect(await sluice.batches.get(id)).toMatchObject({
      id,
      size: 4,
      pending: 4,
      succeeded: 0,
      dead: 0,
      finishedAt: null,
      createdAt: expect.any(Date),
    });

    await withWorker(sluice, [ok, bad], { queues: ['work'] }, () =>
      waitFor(async () => (await countRows(db, 'sluice_jobs', 'queue = ?', ['work'])) === 0, {
        what: 'the batch’s jobs finished',
      }),
    );
    // All done, but no maintenance pass yet: not marked finished, no completion job.
    expect(await sluice.batches.get(id)).toMatchObject({
      size: 4,
      pending: 0,
      succeeded: 3,
      dead: 1,
      finishedAt: null,
    });
    expect(await completionJobs()).toEqual([]);

    const maintainer = sluice.maintenance({ jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { finishBatches: { batches: 1 } } });
    const status = await sluice.batches.get(id);
    expect(status).toMatchObject({ size: 4, pending: 0, succeeded: 3, dead: 1, finishedAt: expect.any(Date) });
    expect(await completionJobs()).toEqual([
      {
        id: expect.any(Number),
        queue: 'reports',
        name: 'report',
        priority: -5,
        max_retries: 7,
        batch_id: null,
        payload: { reportId: 42, batch: { id, size: 4, succeeded: 3, dead: 1, cancelled: 0 } },
      },
    ]);
    expect(events['batch:finished']).toEqual([{ holder: maintainer.holder, batchId: id, completionJob: true }]);

    // Later passes change nothing.
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { finishBatches: { batches: 0 } } });
    expect(await completionJobs()).toHaveLength(1);
    expect((await sluice.batches.get(id))?.finishedAt).toEqual(status?.finishedAt);
    await maintainer.stop();
  });

  it('is not finished while a job of it is still pending (waiting, running or awaiting a retry)', async () => {
    const { batchId } = await db.sluice.enqueueBatch([{ name: 'a' }, { name: 'b' }, { name: 'c' }], {
      onComplete: { name: 'report' },
    });
    const id = batchId as number;
    await db.query('DELETE FROM sluice_jobs WHERE batch_id = ? ORDER BY id LIMIT 2', [id]);
    await db.query('UPDATE sluice_jobs SET retry_times = 2, run_at = NOW(3) + INTERVAL 1 HOUR WHERE batch_id = ?', [
      id,
    ]);
    const maintainer = db.sluice.maintenance({ jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { finishBatches: { batches: 0 } } });
    expect(await db.sluice.batches.get(id)).toMatchObject({
      size: 3,
      pending: 1,
      succeeded: 2,
      dead: 0,
      finishedAt: null,
    });
    expect(await completionJobs()).toEqual([]);

    await db.query('DELETE FROM sluice_jobs WHERE batch_id = ?', [id]);
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { finishBatches: { batches: 1 } } });
    expect(await completionJobs()).toEqual([
      expect.objectContaining({
        queue: 'default',
        payload: { batch: { id, size: 3, succeeded: 3, dead: 0, cancelled: 0 } },
      }),
    ]);
    await maintainer.stop();
  });

  it('several maintainers running passes at once enqueue one completion job and emit one batch:finished in total', async () => {
    const instances: Sluice[] = [db.open(), db.open(), db.open()];
    const finishedEvents = instances.map((s) => recordEvents(s)['batch:finished']);
    const maintainers = instances.map((s) => s.maintenance({ jitterMs: 0 }));
    const { batchId } = await db.sluice.enqueueBatch([{ name: 'a' }, { name: 'b' }], {
      onComplete: { name: 'report', payload: { r: 1 } },
    });
    const id = batchId as number;
    await finishByHand(id, 1);

    let finished = 0;
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(maintainers.map((m) => m.runOnce()));
      // Only the lease holder sweeps.
      expect(results.filter((r) => r.leader)).toHaveLength(1);
      finished += results.reduce((sum, r) => sum + (r.tasks.finishBatches?.batches ?? 0), 0);
    }
    await Promise.all(maintainers.map((m) => m.stop()));

    expect(finished).toBe(1);
    expect(finishedEvents.flat()).toEqual([expect.objectContaining({ batchId: id, completionJob: true })]);
    expect(await completionJobs()).toEqual([
      expect.objectContaining({ payload: { r: 1, batch: { id, size: 2, succeeded: 1, dead: 1, cancelled: 0 } } }),
    ]);
  });

  it('finishBatches called from three connections at once finishes each batch exactly once (the conditional UPDATE alone decides)', async () => {
    const BATCHES = 20;
    const ids: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const { batchId } = await db.sluice.enqueueBatch(
        [
          { name: 'a', payload: { b } },
          { name: 'b', payload: { b } },
        ],
        { onComplete: { name: 'report', payload: { b } } },
      );
      ids.push(batchId as number);
    }
    // A batch without onComplete is finished too, with no completion job.
    const { batchId: plain } = await db.sluice.enqueueBatch([{ name: 'a' }]);
    await db.query('DELETE FROM sluice_jobs');
    const instances = [db.open(), db.open(), db.open()];
    const executors = instances.map((s) => fromKnex(s.knex));

    const all: { batchId: number; completionJob: boolean }[] = [];
    const tasks = executors.map((exec) =>
      finishBatches({ db: exec, tables: db.sluice.tables }, { batchSize: 7, onFinished: (f) => all.push(f) }),
    );
    const results = await Promise.all(tasks.map((task) => task.runOnce()));

    expect(results.reduce((sum, r) => sum + r.batches, 0)).toBe(BATCHES + 1);
    expect(all).toHaveLength(BATCHES + 1);
    expect(new Set(all.map((f) => f.batchId)).size).toBe(BATCHES + 1);
    expect(all.filter((f) => !f.completionJob).map((f) => f.batchId)).toEqual([plain]);
    const jobs = await completionJobs();
    expect(jobs).toHaveLength(BATCHES);
    expect(jobs.map((j) => (j.payload.batch as { id: number }).id).sort((a, b) => a - b)).toEqual(ids);
    expect(jobs.every((j) => (j.payload.batch as { id: number }).id === ids[j.payload.b as number])).toBe(true);
    expect(await countRows(db, 'sluice_batches', 'finished_at IS NULL')).toBe(0);

    // Called again (concurrently), nothing more happens.
    const before = all.length;
    const again = await Promise.all(tasks.map((task) => task.runOnce()));
    expect(again.map((r) => r.batches)).toEqual([0, 0, 0]);
    expect(all).toHaveLength(before);
    expect(await completionJobs()).toHaveLength(BATCHES);
  });

  it('with its budget spent, finishBatches reads one page a run and goes on from there the next, back to the start after the end', async () => {
    const ids: number[] = [];
    for (let b = 0; b < 8; b++)
      ids.push((await db.sluice.enqueueBatch([{ name: 'a', payload: { b } }])).batchId as number);
    // Batches 0-5 keep a live job; 6 and 7 (the third page, of 3 a page) are done, and later 0 is.
    await db.query('DELETE FROM sluice_jobs WHERE batch_id IN (?)', [ids.slice(6)]);
    const finished: number[] = [];
    const task = finishBatches(
      { db: fromKnex(db.sluice.knex), tables: db.sluice.tables },
      { batchSize: 3, onFinished: (f) => finished.push(f.batchId) },
    );
    // No budget left: one page a run. The two done batches sit on the third page.
    expect((await task.runOnce(0)).batches).toBe(0);
    expect((await task.runOnce(0)).batches).toBe(0);
    expect(finished).toEqual([]);
    expect((await task.runOnce(0)).batches).toBe(2);
    expect(finished).toEqual(ids.slice(6));
    // The third page was the last: the next run starts from the first batch again.
    await db.query('DELETE FROM sluice_jobs WHERE batch_id = ?', [ids[0]]);
    expect((await task.runOnce(0)).batches).toBe(1);
    expect(finished).toEqual([...ids.slice(6), ids[0]]);
  });

  it('finds the completion of a 10,000-job batch with the counts right', async () => {
    const JOBS = 10_000;
    const DEAD = 37;
    const { batchId, count } = await db.sluice.enqueueBatch(
      Array.from({ length: JOBS }, (_, n) => ({ name: 'item', queue: 'bulk', payload: { n } })),
      { onComplete: { name: 'report', queue: 'reports', payload: { run: 'big' } } },
    );
    expect(count).toBe(JOBS);
    const id = batchId as number;
    expect(await db.sluice.batches.get(id)).toMatchObject({
      size: JOBS,
      pending: JOBS,
      succeeded: 0,
      dead: 0,
      finishedAt: null,
    });

    // Half of it done: not finished.
    await db.query('DELETE FROM sluice_jobs WHERE batch_id = ? ORDER BY id LIMIT 5000', [id]);
    const maintainer = db.sluice.maintenance({ jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { finishBatches: { batches: 0 } } });
    expect(await db.sluice.batches.get(id)).toMatchObject({ pending: JOBS - 5_000, succeeded: 5_000, dead: 0 });

    await finishByHand(id, DEAD);
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { finishBatches: { batches: 1 } } });
    await maintainer.stop();
    expect(await db.sluice.batches.get(id)).toMatchObject({
      size: JOBS,
      pending: 0,
      succeeded: JOBS - DEAD,
      dead: DEAD,
      finishedAt: expect.any(Date),
    });
    expect(await completionJobs()).toEqual([
      expect.objectContaining({
        queue: 'reports',
        payload: { run: 'big', batch: { id, size: JOBS, succeeded: JOBS - DEAD, dead: DEAD, cancelled: 0 } },
      }),
    ]);
  });
});

describe('an invalid onComplete', () => {
  const cases: [string, JobSpec, RegExp][] = [
    ['a bad name', { name: 'not a name!' }, /^onComplete\.name$/],
    ['an array payload', { name: 'report', payload: [1, 2] }, /^onComplete\.payload$/],
    ['a delay', { name: 'report', delayMs: 1_000 }, /^onComplete$/],
    ['an unknown field', { name: 'report', colour: 'red' } as unknown as JobSpec, /^onComplete\.colour$/],
  ];
  for (const [what, onComplete, field] of cases) {
    it(`(${what}) is a JobValidationError with index -1, and nothing is written`, async () => {
      const error = await db.sluice
        .enqueueBatch([{ name: 'a' }, { name: 'b' }], { onComplete })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect((error as JobValidationError).index).toBe(-1);
      expect((error as JobValidationError).field).toMatch(field);
      expect(await countRows(db, 'sluice_jobs')).toBe(0);
      expect(await countRows(db, 'sluice_batches')).toBe(0);
    });
  }
});
