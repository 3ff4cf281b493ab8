import { describe, expect, it } from 'vitest';
import { defineJob, type LoadReading } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * Payloads over 1 KiB of JSON that pack into their job's row are stored packed there
 * (src/model/storedPayload.ts); one that would stay apart however it is stored is kept as JSON.
 * Every reader — a handler, jobs.get, the dead-job list, re-drive, the redaction hook — sees the payload
 * as it was enqueued, through the single and the batch enqueue and a debounce.
 */
const db = useTestDatabase('packed_payloads');

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };

/** ~5 KB of JSON that packs to a few hundred bytes: repeated records, as real payloads repeat their keys. */
const packable = (n: number) => ({
  n,
  lines: Array.from({ length: 120 }, (_, i) => ({ sku: `SKU-${i % 13}`, qty: i % 5, note: 'gift wrap ✓' })),
});
/** ~6 KB that packs to about half (hex digits carry 4 bits each): still apart packed, so kept as JSON. */
const halfPackable = (n: number) => ({ n, hex: Buffer.from(randomText(3_000, n)).toString('hex') });

const seen = new Map<number, unknown>();
const record = defineJob({ name: 'record', handle: (payload: unknown, ctx) => void seen.set(ctx.job.id, payload) });
const fail = defineJob({
  name: 'fail',
  maxRetries: 0,
  handle: () => {
    throw new Error('fails on purpose');
  },
});

interface StoredRow {
  id: number;
  inline_payload: string;
  apart: string | null;
}

async function storedRows(): Promise<StoredRow[]> {
  return db.query<StoredRow>(
    `SELECT j.id, j.payload AS inline_payload, p.payload AS apart
     FROM sluice_jobs j LEFT JOIN sluice_job_payloads p ON p.job_id = j.id ORDER BY j.id`,
  );
}

async function drain(sluice = db.sluice, queue = 'default'): Promise<void> {
  await withWorker(sluice, [record, fail], { concurrency: 10, loadSampler: async () => CALM, queues: [queue] }, () =>
    waitFor(async () => (await countRows(db, 'sluice_jobs')) === 0, { what: 'the live table empty' }),
  );
}

describe('packed payloads', () => {
  it('a packable payload is stored packed in its row, one that packs less stays JSON apart; every handler gets its own', async () => {
    seen.clear();
    const single = await db.sluice.enqueue({ name: 'record', payload: packable(0) });
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'record', payload: packable(1) },
      { name: 'record', payload: halfPackable(2) },
      { name: 'record', payload: { n: 3, text: randomText(4_000, 3) } },
      { name: 'record', payload: { n: 4 } },
    ]);
    const rows = await storedRows();
    const kinds = rows.map((r) => {
      const stored = r.apart ?? r.inline_payload;
      return `${r.apart === null ? 'inline' : 'apart'} ${stored.startsWith('deflate:') ? 'packed' : 'json'}`;
    });
    expect(kinds).toEqual(['inline packed', 'inline packed', 'apart json', 'apart json', 'inline json']);
    expect(rows[0]?.inline_payload.length).toBeLessThan(JSON.stringify(packable(0)).length / 5);
    const expected = [packable(0), packable(1), halfPackable(2), { n: 3, text: randomText(4_000, 3) }, { n: 4 }];
    for (const [i, row] of rows.entries())
      expect((await db.sluice.jobs.get(Number(row.id)))?.payload).toEqual(expected[i]);

    await drain();
    expect(rows.map((r) => seen.get(Number(r.id)))).toEqual(expected);
    expect(single.id).toBe(Number(rows[0]?.id));
    expect(batchId).not.toBeNull();
    // The history keeps what the row held: the packed text, read back as the payload.
    const history = await db.query<{ payload: string }>('SELECT payload FROM sluice_job_history WHERE job_id = ?', [
      single.id,
    ]);
    expect(history[0]?.payload.startsWith('deflate:')).toBe(true);
    expect((await db.sluice.jobs.get(single.id))?.payload).toEqual(packable(0));
  });

  it('a dead job keeps its packed payload: listed, re-driven and run with it', async () => {
    seen.clear();
    const sluice = db.open({ historyRetentionMs: 0 });
    const { id } = await sluice.enqueue({ name: 'fail', queue: 'dead', payload: packable(7) });
    await drain(sluice, 'dead');
    const dead = await db.query<{ payload: string }>('SELECT payload FROM sluice_dead_jobs WHERE id = ?', [id]);
    expect(dead[0]?.payload.startsWith('deflate:')).toBe(true);
    expect((await sluice.deadJobs.list({ queue: 'dead' }))[0]).toMatchObject({ id, payload: packable(7) });
    expect(await sluice.deadJobs.redrive({ ids: [id] })).toEqual({ redriven: 1 });
    const [live] = await db.query<{ id: number }>('SELECT id FROM sluice_jobs');
    await db.query("UPDATE sluice_jobs SET name = 'record' WHERE id = ?", [live?.id]);
    await drain(sluice, 'dead');
    expect(seen.get(Number(live?.id))).toEqual(packable(7));
  });

  it('the redaction hook is given the payload unpacked', async () => {
    const given: unknown[] = [];
    const sluice = db.open({
      redactPayload: ({ payload }) => {
        given.push(payload);
        return { kept: (payload as { n: number }).n };
      },
    });
    const { id } = await sluice.enqueue({ name: 'record', payload: packable(9) });
    await drain(sluice);
    expect(given).toEqual([packable(9)]);
    expect((await sluice.jobs.get(id))?.payload).toEqual({ kept: 9 });
  });

  it('a debounce replaces a packed payload with another, and with a small one', async () => {
    const debounce = { key: 'packed', delayMs: 10_000 };
    const { id } = await db.sluice.enqueue({ name: 'record', payload: packable(1), debounce });
    expect((await db.sluice.enqueue({ name: 'record', payload: packable(2), debounce })).id).toBe(id);
    expect((await db.sluice.jobs.get(id))?.payload).toEqual(packable(2));
    await db.sluice.enqueue({ name: 'record', payload: { small: true }, debounce });
    expect((await storedRows()).map((r) => r.inline_payload)).toEqual(['{"small":true}']);
  });
});
