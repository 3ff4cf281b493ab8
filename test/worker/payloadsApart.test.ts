import { describe, expect, it } from 'vitest';
import { ClaimLostError } from '../../src/errors.ts';
import { defineJob, type JobSpec, type LoadReading } from '../../src/index.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { countRows, deadRow, insertJob, operationsOf } from '../helpers/factory.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * Payloads over 1 KiB are stored once, in sluice_job_payloads, with '' in the job's row: the
 * claim reads them with its rows, completions and dead-lettering keep a reference (the job's id)
 * instead of a copy, and pruning or purging the rows that refer to them deletes them. Every
 * reader sees the payload as it was enqueued, and rows written before the table existed (their
 * payload inline, whatever its size) keep working.
 */
const db = useTestDatabase('payloads_apart');

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };
const DAY = 24 * 3600 * 1000;

/** A payload of about `bytes` bytes as JSON that does not pack, recognisable by `n`. */
const sized = (n: number, bytes: number) => ({ n, text: randomText(bytes, n) });

const seen = new Map<number, unknown>();
const record = defineJob({
  name: 'record',
  handle: (payload: unknown, ctx) => {
    seen.set(ctx.job.id, payload);
  },
});
const fail = defineJob({
  name: 'fail',
  maxRetries: 0,
  handle: () => {
    throw new Error('fails on purpose');
  },
});

const payloadRows = () => countRows(db, 'sluice_job_payloads');
const liveJobs = () => countRows(db, 'sluice_jobs');

async function idsOf(batchId: number | null): Promise<number[]> {
  const rows = await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE batch_id = ? ORDER BY id', [batchId]);
  return rows.map((r) => Number(r.id));
}

async function drain(sluice = db.sluice, queue = 'default'): Promise<void> {
  await withWorker(sluice, [record, fail], { concurrency: 20, loadSampler: async () => CALM, queues: [queue] }, () =>
    waitFor(async () => (await liveJobs()) === 0, { what: 'the live table empty' }),
  );
}

describe('enqueue', () => {
  it('stores payloads over 1 KiB apart, smaller ones inline, across INSERT chunks, each under its own job', async () => {
    const sluice = db.open({ maxRowsPerInsert: 7 });
    const sizes = Array.from({ length: 40 }, (_, n) => [10, 900, 1_100, 5_000, 16_000][n % 5] as number);
    const specs: JobSpec[] = sizes.map((bytes, n) => ({ name: 'record', payload: sized(n, bytes) }));
    const { batchId } = await sluice.enqueueBatch(specs);
    const ids = await idsOf(batchId);
    const rows = await db.query<{ id: number; inline_payload: string; apart: string | null }>(
      `SELECT j.id, j.payload AS inline_payload, p.payload AS apart
       FROM sluice_jobs j LEFT JOIN sluice_job_payloads p ON p.job_id = j.id ORDER BY j.id`,
    );
    expect(rows.map((r) => Number(r.id))).toEqual(ids);
    rows.forEach((row, n) => {
      const stored = JSON.parse(row.apart ?? row.inline_payload) as { n: number };
      expect(stored).toEqual(sized(n, sizes[n] as number));
      expect(row.inline_payload === '').toBe((sizes[n] as number) > 1_000);
      expect(row.apart === null).toBe((sizes[n] as number) < 1_000);
    });
    for (const [n, id] of ids.entries())
      expect((await sluice.jobs.get(id))?.payload).toEqual(sized(n, sizes[n] as number));
  });

  it('a single enqueue of a large payload writes both rows in one transaction; with a key, a duplicate writes neither', async () => {
    const { id } = await db.sluice.enqueue({ name: 'record', payload: sized(1, 4_000), idempotencyKey: 'k' });
    const again = await db.sluice.enqueue({ name: 'record', payload: sized(2, 4_000), idempotencyKey: 'k' });
    expect(again).toEqual({ id, duplicate: true });
    expect(await payloadRows()).toBe(1);
    expect((await db.sluice.jobs.get(id))?.payload).toEqual(sized(1, 4_000));
  });

  it('a payload stored apart inside a caller’s transaction rolls back with it', async () => {
    await expect(
      db.sluice.knex.transaction(async (trx) => {
        await db.sluice.enqueue({ name: 'record', payload: sized(1, 4_000) }, { trx });
        await db.sluice.enqueueBatch([{ name: 'record', payload: sized(2, 4_000) }], { trx });
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    expect([await liveJobs(), await payloadRows()]).toEqual([0, 0]);
  });
});

describe('the worker', () => {
  it('runs each job with its payload; with history the payloads stay, referred to, until the history is pruned', async () => {
    seen.clear();
    const sluice = db.open({ historyRetentionMs: DAY });
    const { batchId } = await sluice.enqueueBatch(
      Array.from({ length: 30 }, (_, n) => ({ name: 'record', payload: sized(n, n % 2 ? 3_000 : 50) })),
    );
    const ids = await idsOf(batchId);
    await drain(sluice);
    expect(ids.map((id) => seen.get(id))).toEqual(ids.map((_, n) => sized(n, n % 2 ? 3_000 : 50)));
    // The history rows hold a reference, not a copy; the payload is read through it.
    const history = await db.query<{ payload: string }>('SELECT payload FROM sluice_job_history ORDER BY job_id');
    expect(history.filter((h) => h.payload === '')).toHaveLength(15);
    expect(await payloadRows()).toBe(15);
    expect((await sluice.jobs.get(ids[1] as number))?.payload).toEqual(sized(1, 3_000));
    expect((await sluice.jobs.get(ids[1] as number))?.state).toBe('completed');

    await db.query('UPDATE sluice_job_history SET finished_at = NOW(3) - INTERVAL 2 DAY');
    const maintenance = sluice.maintenance({ batchSize: 10, maxPruneBatches: 10, jitterMs: 0 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneHistory: { pruned: 30 } } });
    expect([await countRows(db, 'sluice_job_history'), await payloadRows()]).toEqual([0, 0]);
  });

  it('hands each handler its payload as enqueued, multi-byte text included, inline or apart; one not JSON or not unpacking fails unrun', async () => {
    seen.clear();
    // A claim reads payloads as bytes and decodes them itself (claimedRow.ts): every width of UTF-8.
    // Inline, apart (random text does not pack), and packed (a repeated character packs to a few bytes).
    const text = (n: number) => `é ü ß 中文 😀 ${'ä'.repeat(n / 10)}${randomText(n, n)}`;
    const specs = [10, 400, 700, 3_000].map((n) => ({ name: 'record', payload: { n, text: text(n) } }));
    specs.push({ name: 'record', payload: { n: 5_000, text: `中文 😀 ${'ä'.repeat(5_000)}` } });
    const { batchId } = await db.sluice.enqueueBatch(specs);
    const ids = await idsOf(batchId);
    // Written around sluice: a payload that is not JSON, inline and apart.
    const bad = [await insertJob(db, { name: 'record' }), await insertJob(db, { name: 'record' })];
    await db.query("UPDATE sluice_jobs SET payload = '{not json', max_retries = 3 WHERE id = ?", [bad[0]]);
    await db.query("UPDATE sluice_jobs SET payload = '', max_retries = 3 WHERE id = ?", [bad[1]]);
    await db.query("INSERT INTO sluice_job_payloads (job_id, payload) VALUES (?, '[1, 2')", [bad[1]]);
    // Packed text that does not unpack.
    bad.push(await insertJob(db, { name: 'record' }));
    await db.query("UPDATE sluice_jobs SET payload = 'deflate:bm90IGRlZmxhdGU=', max_retries = 3 WHERE id = ?", [
      bad[2],
    ]);
    await drain();
    expect(ids.map((id) => seen.get(id))).toEqual(specs.map((s) => s.payload));
    expect(await payloadRows()).toBeGreaterThan(0);
    const [packed] = await db.query<{ n: number }>(
      "SELECT COUNT(*) AS n FROM sluice_job_history WHERE payload LIKE 'deflate:%'",
    );
    expect(Number(packed?.n)).toBe(1);
    for (const [i, id] of bad.entries()) {
      expect(seen.has(id)).toBe(false);
      const dead = await deadRow(db, id);
      expect(dead?.last_error).toMatch(
        i < 2
          ? `PermanentJobError: payload of job ${id} is not valid JSON`
          : 'PayloadRefusedError: payload refused: packed text does not unpack',
      );
      expect(dead?.retry_times).toBe(1);
    }
  });

  it('without history a completion deletes the payloads with their jobs, in every delivery mode', async () => {
    seen.clear();
    const sluice = db.open({ historyRetentionMs: 0 });
    const once = defineJob({ name: 'once', delivery: 'exactly-once', handle: () => undefined });
    const fire = defineJob({ name: 'fire', delivery: 'at-most-once', handle: () => undefined });
    await sluice.enqueueBatch(
      ['record', 'once', 'fire'].flatMap((name) =>
        Array.from({ length: 6 }, (_, n) => ({ name, queue: 'nohist', payload: sized(n, n % 2 ? 2_000 : 20) })),
      ),
    );
    expect(await payloadRows()).toBe(9);
    await withWorker(
      sluice,
      [record, once, fire],
      { concurrency: 5, queues: ['nohist'], loadSampler: async () => CALM },
      () => waitFor(async () => (await liveJobs()) === 0, { what: 'the live table empty' }),
    );
    expect(await payloadRows()).toBe(0);
  });

  it('a completion without history is fenced: a job whose claim was lost keeps its row and its payload', async () => {
    const { exec, tables } = operationsOf(db);
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'record', payload: sized(1, 2_000) },
      { name: 'record', payload: sized(2, 2_000) },
      { name: 'record', payload: sized(3, 20) },
    ]);
    const [held, lost, small] = await idsOf(batchId);
    await db.query("UPDATE sluice_jobs SET lock_id = 'mine.1', locked_at = NOW(3)");
    await db.query("UPDATE sluice_jobs SET lock_id = 'theirs.1' WHERE id = ?", [lost]);
    const error = await completeJobs(exec, tables, 'mine.1', [held, lost, small] as number[], {
      history: false,
      apart: 2,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClaimLostError);
    expect((error as ClaimLostError).lost).toBeGreaterThanOrEqual(1);
    const left = await db.query<{ id: number }>('SELECT id FROM sluice_jobs');
    expect(left.map((r) => Number(r.id))).toEqual([lost]);
    const payloads = await db.query<{ job_id: number }>('SELECT job_id FROM sluice_job_payloads');
    expect(payloads.map((r) => Number(r.job_id))).toEqual([lost]);
    expect((await db.sluice.jobs.get(lost as number))?.payload).toEqual(sized(2, 2_000));
  });

  it('a dead job keeps its payload by reference: listed, re-driven (inline), purged with it', async () => {
    const sluice = db.open({ historyRetentionMs: 0 });
    const { id } = await sluice.enqueue({ name: 'fail', queue: 'dead', payload: sized(7, 6_000) });
    await drain(sluice, 'dead');
    const dead = await db.query<{ payload: string }>('SELECT payload FROM sluice_dead_jobs WHERE id = ?', [id]);
    expect(dead[0]?.payload).toBe('');
    expect((await sluice.deadJobs.list({ queue: 'dead' }))[0]).toMatchObject({ id, payload: sized(7, 6_000) });
    expect((await sluice.jobs.get(id))?.payload).toEqual(sized(7, 6_000));

    expect(await sluice.deadJobs.redrive({ ids: [id] })).toEqual({ redriven: 1 });
    const [live] = await db.query<{ id: number }>('SELECT id FROM sluice_jobs');
    expect((await sluice.jobs.get(Number(live?.id)))?.payload).toEqual(sized(7, 6_000));

    expect(await sluice.deadJobs.purge({ ids: [id], includeRedriven: true })).toEqual({ purged: 1 });
    expect(await payloadRows()).toBe(0);
  });

  it('pruning dead jobs deletes their payloads; cancelling without history deletes them too', async () => {
    const sluice = db.open({ historyRetentionMs: 0, deadRetentionMs: DAY });
    await sluice.enqueueBatch(
      Array.from({ length: 4 }, (_, n) => ({ name: 'fail', queue: 'dead', payload: sized(n, 2_000) })),
    );
    await drain(sluice, 'dead');
    expect([await countRows(db, 'sluice_dead_jobs'), await payloadRows()]).toEqual([4, 4]);
    await db.query('UPDATE sluice_dead_jobs SET failed_at = NOW(3) - INTERVAL 2 DAY');
    const maintenance = sluice.maintenance({ batchSize: 3, maxPruneBatches: 10, jitterMs: 0 });
    expect(await maintenance.runOnce()).toMatchObject({ tasks: { pruneDeadJobs: { pruned: 4 } } });
    expect(await payloadRows()).toBe(0);

    const { id } = await sluice.enqueue({ name: 'record', queue: 'later', payload: sized(1, 2_000), delayMs: DAY });
    expect(await sluice.jobs.cancel(id)).toEqual({ cancelled: 1 });
    expect(await payloadRows()).toBe(0);
  });

  it('redaction keeps only what the hook returns: the payload stored apart is deleted', async () => {
    const sluice = db.open({ redactPayload: (job) => ({ kept: (job.payload as { n: number }).n }) });
    const { id } = await sluice.enqueue({ name: 'record', queue: 'redact', payload: sized(3, 2_000) });
    await drain(sluice, 'redact');
    expect(await payloadRows()).toBe(0);
    expect((await sluice.jobs.get(id))?.payload).toEqual({ kept: 3 });
  });
});

describe('rows written before payloads were stored apart', () => {
  it('keep their inline payloads, whatever their size, in every table and through a worker', async () => {
    seen.clear();
    const big = JSON.stringify(sized(1, 20_000));
    await db.query(`INSERT INTO sluice_jobs (queue, name, payload, run_at) VALUES ('old', 'record', ?, NOW(3))`, [big]);
    const [live] = await db.query<{ id: number }>('SELECT id FROM sluice_jobs');
    const liveId = Number(live?.id);
    await db.query(
      `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at)
       VALUES (900001, 'old', 'record', ?, 0, NOW(3), NOW(3))`,
      [big],
    );
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, created_at, failed_at)
       VALUES (900002, 'old', 'record', ?, 0, 1, NOW(3), NOW(3))`,
      [big],
    );
    for (const id of [liveId, 900001, 900002])
      expect((await db.sluice.jobs.get(id))?.payload).toEqual(sized(1, 20_000));
    expect((await db.sluice.deadJobs.list({ queue: 'old' }))[0]?.payload).toEqual(sized(1, 20_000));
    await drain(db.sluice, 'old');
    expect(seen.get(liveId)).toEqual(sized(1, 20_000));
    expect((await db.sluice.jobs.get(liveId))?.payload).toEqual(sized(1, 20_000));
    expect(await payloadRows()).toBe(0);
  });
});
