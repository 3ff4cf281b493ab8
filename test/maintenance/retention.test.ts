import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineJob, type LoadReading, type Sluice, type SluiceEventMap } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * README "Retention": completed jobs are copied to sluice_job_history (historyRetentionMs, 0 keeps
 * none), dead jobs are kept for deadRetentionMs, and the sweeper prunes both continuously in small
 * batches (at most maxPruneBatches per table per pass), never one big delete. The live table only
 * ever holds jobs that wait, run or await a retry.
 */
const db = useTestDatabase('ops_retention');

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };
const ok = defineJob({ name: 'ok', handle: () => undefined });
const bad = defineJob({
  name: 'bad',
  maxRetries: 0,
  handle: () => {
    throw new Error('bad on purpose');
  },
});

beforeAll(async () => {
  await db.query(
    'CREATE TABLE IF NOT EXISTS ops_effects (job_id BIGINT UNSIGNED NOT NULL, attempt INT NOT NULL) ENGINE=InnoDB',
  );
});

afterAll(async () => {
  await db.query('DROP TRIGGER IF EXISTS ops_refuse_first_delete');
});

const liveJobs = () => countRows(db, 'sluice_jobs');

interface HistoryRow {
  job_id: number;
  queue: string;
  name: string;
  retry_times: number;
  batch_id: number | null;
  age_ms: number;
}

async function history(): Promise<HistoryRow[]> {
  const rows = await db.query<HistoryRow>(
    'SELECT job_id, queue, name, retry_times, batch_id, TIMESTAMPDIFF(MICROSECOND, finished_at, NOW(3)) DIV 1000 AS age_ms FROM sluice_job_history ORDER BY job_id',
  );
  return rows.map((r) => ({ ...r, job_id: Number(r.job_id), age_ms: Number(r.age_ms) }));
}

/** Inserts `count` history rows finished `agoMs` (+ i seconds, so oldest last) ago, with job ids from `firstId`. */
async function insertHistory(firstId: number, count: number, agoMs: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => firstId + i);
  await db.query(
    `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, batch_id, created_at, finished_at)
     VALUES ${rows.map(() => `(?, 'old', 'ok', '{}', 0, NULL, NOW(3) - INTERVAL ? MICROSECOND, NOW(3) - INTERVAL ? MICROSECOND)`).join(', ')}`,
    rows.flatMap((id) => [id, (agoMs + (id - firstId) * 1000 + 1000) * 1000, (agoMs + (id - firstId) * 1000) * 1000]),
  );
}

/** Inserts `count` dead jobs that failed `agoMs` (+ i seconds) ago, with ids from `firstId`. */
async function insertDead(firstId: number, count: number, agoMs: number): Promise<void> {
  const rows = Array.from({ length: count }, (_, i) => firstId + i);
  await db.query(
    `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, max_retries, created_at, failed_at, last_error)
     VALUES ${rows.map(() => `(?, 'old', 'bad', '{}', 0, 1, 0, NOW(3) - INTERVAL ? MICROSECOND, NOW(3) - INTERVAL ? MICROSECOND, 'x')`).join(', ')}`,
    rows.flatMap((id) => [id, (agoMs + (id - firstId) * 1000 + 1000) * 1000, (agoMs + (id - firstId) * 1000) * 1000]),
  );
}

/** The DELETE statements one sluice instance sends to `table`, each as the number of rows it names. */
function recordDeletes(sluice: Sluice, table: string): number[] {
  const limits: number[] = [];
  sluice.knex.on('query', (q: { sql: string; bindings?: unknown[] }) => {
    // Each batch deletes the rows it locked, by key: the list's length is the batch's size.
    if (new RegExp(`^\\s*DELETE FROM \`?${table}\`?\\s`).test(q.sql))
      limits.push((q.bindings?.[0] as unknown[] | undefined)?.length ?? 0);
  });
  return limits;
}

const DAY = 24 * 3600 * 1000;

describe('job history', () => {
  it('a completion writes a history row (job_id, queue, finished_at) by default; a dead job does not', async () => {
    const sluice = db.open();
    const { batchId } = await sluice.enqueueBatch([
      { name: 'ok', queue: 'hist', payload: { n: 1 } },
      { name: 'ok', queue: 'hist', payload: { n: 2 } },
      { name: 'ok', queue: 'hist-b', payload: { n: 3 } },
      { name: 'bad', queue: 'hist' },
    ]);
    const ids = (
      await db.query<{ id: number; name: string }>('SELECT id, name FROM sluice_jobs WHERE batch_id = ? ORDER BY id', [
        batchId,
      ])
    ).map((r) => ({
      id: Number(r.id),
      name: r.name,
    }));
    await withWorker(
      sluice,
      [ok, bad],
      { concurrency: 10, loadSampler: async () => CALM, queues: ['hist', 'hist-b'] },
      async () => {
        await waitFor(async () => (await liveJobs()) === 0, { what: 'the live table empty' });
      },
    );
    const rows = await history();
    const okIds = ids.filter((j) => j.name === 'ok').map((j) => j.id);
    expect(rows.map((r) => r.job_id)).toEqual(okIds);
    expect(rows.map((r) => [r.queue, r.name, r.retry_times, Number(r.batch_id)])).toEqual([
      ['hist', 'ok', 0, batchId],
      ['hist', 'ok', 0, batchId],
      ['hist-b', 'ok', 0, batchId],
    ]);
    // finished_at: just now, on the DB clock.
    for (const r of rows) expect(r.age_ms).toBeGreaterThanOrEqual(0);
    for (const r of rows) expect(r.age_ms).toBeLessThan(60_000);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(1);
  });

  it('historyRetentionMs: 0 writes no history (at-least-once, exactly-once, at-most-once)', async () => {
    const sluice = db.open({ historyRetentionMs: 0 });
    const once = defineJob({ name: 'once', delivery: 'exactly-once', handle: () => undefined });
    const fire = defineJob({ name: 'fire', delivery: 'at-most-once', handle: () => undefined });
    await sluice.enqueueBatch(
      [{ name: 'ok' }, { name: 'ok' }, { name: 'once' }, { name: 'fire' }].map((j) => ({ ...j, queue: 'nohist' })),
    );
    const completed: number[] = [];
    sluice.events.on('job:completed', (e) => completed.push(e.jobId));
    await withWorker(
      sluice,
      [ok, once, fire],
      { concurrency: 10, loadSampler: async () => CALM, queues: ['nohist'] },
      async () => {
        await waitFor(async () => completed.length === 4 && (await liveJobs()) === 0, { what: 'four jobs completed' });
      },
    );
    expect(await history()).toEqual([]);

    // The same jobs through an instance with the default retention do leave history (the check above can fail).
    const withHistory = db.open();
    await withHistory.enqueueBatch(
      [{ name: 'ok' }, { name: 'once' }, { name: 'fire' }].map((j) => ({ ...j, queue: 'nohist' })),
    );
    await withWorker(
      withHistory,
      [ok, once, fire],
      { concurrency: 10, loadSampler: async () => CALM, queues: ['nohist'] },
      async () => {
        await waitFor(async () => (await liveJobs()) === 0 && (await history()).length === 3, {
          what: 'three history rows',
        });
      },
    );
  });

  it('an exactly-once job writes its history row in its own transaction: a failed delete rolls back the handler’s writes and the history row together', async () => {
    const sluice = db.open();
    // The first delete of this job's row fails inside the transaction (after the handler's write
    // and the copy to history); the retry's delete goes through.
    await db.query('DROP TRIGGER IF EXISTS ops_refuse_first_delete');
    await db.query(`
CREATE TRIGGER ops_refuse_first_delete BEFORE DELETE ON sluice_jobs FOR EACH ROW
BEGIN
  IF OLD.name = 'once-tx' AND OLD.retry_times = 0 THEN
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'ops test: first delete refused';
  END IF;
END`);
    try {
      const onceTx = defineJob({
        name: 'once-tx',
        delivery: 'exactly-once',
        backoff: { type: 'fixed', delayMs: 200 },
        async handle(_payload, ctx) {
          await ctx.trx!.raw('INSERT INTO ops_effects (job_id, attempt) VALUES (?, ?)', [
            ctx.job.id,
            ctx.job.retryTimes + 1,
          ]);
        },
      });
      const failed: SluiceEventMap['job:failed'][] = [];
      sluice.events.on('job:failed', (e) => failed.push(e));
      const { id } = await sluice.enqueue({ name: 'once-tx', queue: 'tx' });
      await withWorker(
        sluice,
        [onceTx],
        { concurrency: 10, loadSampler: async () => CALM, queues: ['tx'] },
        async () => {
          await waitFor(() => failed.length === 1, { what: 'the first attempt failed at its delete' });
          expect(failed[0]?.error.message).toContain('first delete refused');
          // Rolled back: neither the handler's row nor the history row of attempt 1 exists.
          expect(await db.query('SELECT job_id FROM ops_effects')).toEqual([]);
          expect(await history()).toEqual([]);
          await waitFor(async () => (await liveJobs()) === 0, { what: 'the retry completed' });
        },
      );
      expect(await db.query('SELECT job_id, attempt FROM ops_effects')).toEqual([{ job_id: id, attempt: 2 }]);
      expect((await history()).map((r) => [r.job_id, r.queue, r.name, r.retry_times])).toEqual([
        [id, 'tx', 'once-tx', 1],
      ]);
      expect(failed).toHaveLength(1);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS ops_refuse_first_delete');
    }
  });
});

describe('retention pruning (Maintainer.runOnce)', () => {
  it('prunes history older than historyRetentionMs in bounded batches (batchSize 10 × maxPruneBatches 2 per pass), oldest first, keeping young rows', async () => {
    const sluice = db.open({ historyRetentionMs: DAY });
    await insertHistory(1_000, 35, 2 * DAY); // job 1000 finished 2 days ago, 1034 2 days + 34 s ago
    await insertHistory(5_000, 5, 60_000); // a minute ago: young
    const deletes = recordDeletes(sluice, 'sluice_job_history');
    const maintainer = sluice.maintenance({ batchSize: 10, maxPruneBatches: 2, jitterMs: 0 });

    const first = await maintainer.runOnce();
    expect(first).toMatchObject({
      leader: true,
      tasks: { pruneHistory: { pruned: 20 }, pruneDeadJobs: { pruned: 0 } },
    });
    expect(deletes).toEqual([10, 10]); // two statements of at most 10 rows: no big delete
    const left = (await history()).map((r) => r.job_id);
    // Oldest first: 1015…1034 (the oldest) went; 1000…1014 and the young rows stay.
    expect(left).toEqual([...Array.from({ length: 15 }, (_, i) => 1_000 + i), 5_000, 5_001, 5_002, 5_003, 5_004]);

    deletes.length = 0;
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 15 } } });
    expect(deletes).toEqual([10, 5]); // 10, then a short batch of 5 ends the pass
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 0 } } });
    expect((await history()).map((r) => r.job_id)).toEqual([5_000, 5_001, 5_002, 5_003, 5_004]);
    await maintainer.stop();
  });

  it('prunes dead jobs older than deadRetentionMs the same way; Infinity keeps them, 0 keeps none', async () => {
    await insertDead(2_000, 35, 2 * 60_000); // failed 2 minutes ago
    await insertDead(6_000, 5, 0); // just now
    const keeper = db
      .open({ deadRetentionMs: Number.POSITIVE_INFINITY })
      .maintenance({ batchSize: 10, maxPruneBatches: 2, jitterMs: 0 });
    expect(await keeper.runOnce()).toMatchObject({ leader: true, tasks: { pruneDeadJobs: { pruned: 0 } } });
    await keeper.stop();
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(40);

    const sluice = db.open({ deadRetentionMs: 60_000 });
    const deletes = recordDeletes(sluice, 'sluice_dead_jobs');
    const maintainer = sluice.maintenance({ batchSize: 10, maxPruneBatches: 2, jitterMs: 0 });
    expect(await maintainer.runOnce()).toMatchObject({ leader: true, tasks: { pruneDeadJobs: { pruned: 20 } } });
    expect(deletes).toEqual([10, 10]);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(20);
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneDeadJobs: { pruned: 15 } } });
    expect(await maintainer.runOnce()).toMatchObject({ tasks: { pruneDeadJobs: { pruned: 0 } } });
    const left = (await db.query<{ id: number }>('SELECT id FROM sluice_dead_jobs ORDER BY id')).map((r) =>
      Number(r.id),
    );
    expect(left).toEqual([6_000, 6_001, 6_002, 6_003, 6_004]);
    await maintainer.stop();

    // 0 keeps none, as historyRetentionMs 0 does: even the jobs that died just now go.
    const none = db.open({ deadRetentionMs: 0 }).maintenance({ batchSize: 10, maxPruneBatches: 2, jitterMs: 0 });
    expect(await none.runOnce()).toMatchObject({ tasks: { pruneDeadJobs: { pruned: 5 } } });
    await none.stop();
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
  });

  it('a steady stream of 2,000 jobs through a worker leaves the live table empty and its history prunable in bounded passes', async () => {
    const sluice = db.open();
    const batches: number[] = [];
    await withWorker(sluice, [ok], { loadSampler: async () => CALM, queues: ['stream'], concurrency: 20 }, async () => {
      // Submitted while the worker drains: 20 batches of 100.
      for (let i = 0; i < 20; i++) {
        const { batchId } = await sluice.enqueueBatch(
          Array.from({ length: 100 }, (_, n) => ({ name: 'ok', queue: 'stream', payload: { i, n } })),
        );
        batches.push(batchId as number);
      }
      await waitFor(async () => (await liveJobs()) === 0 && (await countRows(db, 'sluice_job_history')) === 2_000, {
        what: '2,000 jobs drained into history',
        timeoutMs: 60_000,
      });
    });
    expect(await liveJobs()).toBe(0);
    expect(await countRows(db, 'sluice_dead_jobs')).toBe(0);
    const perBatch = await db.query<{ batch_id: number; n: number }>(
      'SELECT batch_id, COUNT(DISTINCT job_id) AS n FROM sluice_job_history GROUP BY batch_id ORDER BY batch_id',
    );
    expect(perBatch.map((r) => [Number(r.batch_id), Number(r.n)])).toEqual(batches.map((b) => [b, 100]));

    // A day later: the sweeper removes it in passes of at most 2 × 500 rows.
    await db.query('UPDATE sluice_job_history SET finished_at = finished_at - INTERVAL 2 DAY');
    const maintainer = sluice.maintenance({ batchSize: 500, maxPruneBatches: 2, jitterMs: 0 });
    const pruned = [
      (await maintainer.runOnce()).tasks.pruneHistory?.pruned,
      (await maintainer.runOnce()).tasks.pruneHistory?.pruned,
      (await maintainer.runOnce()).tasks.pruneHistory?.pruned,
    ];
    expect(pruned).toEqual([1_000, 1_000, 0]);
    expect(await countRows(db, 'sluice_job_history')).toBe(0);
    await maintainer.stop();
  });
});
