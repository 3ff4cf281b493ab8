import { deflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { defineJob, type LoadReading, type Sluice } from '../../src/index.ts';
import { deadRow, insertJob } from '../helpers/factory.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { recordEvents, withWorker } from '../helpers/workerHarness.ts';

/**
 * A stored payload is untrusted input (docs/how-it-works.md, Payloads): a worker reads only what
 * sluice could have written — packed text at most as long as a row's (1,024 characters), only in
 * the job's row, and no payload past 15 MiB — and dead-letters any other at once, unrun, with
 * SLUICE_PAYLOAD_REFUSED, going on with its other jobs. The rows are written directly, as the
 * issue found them: an 85 KB packed row that unpacks to 63 MB, a 400 KB one, packed text in
 * job_payloads.
 */
const db = useTestDatabase('refused_payloads');

const CALM: LoadReading = { cpu: 0.1, freeMem: 0.8 };

/** Packed text (as sluice writes it, but of any length) of `json`. */
const packed = (json: Buffer | string) => `deflate:${deflateRawSync(json, { level: 9 }).toString('base64')}`;

/** An 85 KB packed text of a JSON string of 63 MiB of zeros: it unpacks to ~750 times its length. */
function bomb(): string {
  const json = Buffer.alloc(63 * 1024 * 1024, '0');
  json[0] = 0x22;
  json[json.length - 1] = 0x22;
  return packed(json);
}

/** A 400 KB packed text of ~600 KB of JSON that only halves when deflated. */
const wide = () => packed(JSON.stringify({ hex: Buffer.from(randomText(320_000, 4)).toString('hex') }));

const seen = new Map<number, unknown>();
const record = defineJob({ name: 'record', handle: (payload: unknown, ctx) => void seen.set(ctx.job.id, payload) });

/** Inserts a job whose row holds `rowPayload` (and job_payloads `apart`, when given), 3 retries allowed. */
async function storedJob(rowPayload: string, apart?: string): Promise<number> {
  const id = await insertJob(db, { name: 'record', maxRetries: 3 });
  await db.query('UPDATE sluice_jobs SET payload = ? WHERE id = ?', [apart === undefined ? rowPayload : '', id]);
  if (apart !== undefined)
    await db.query('INSERT INTO sluice_job_payloads (job_id, payload) VALUES (?, ?)', [id, apart]);
  return id;
}

async function drain(sluice: Sluice, then?: () => Promise<void>): Promise<void> {
  await withWorker(sluice, [record], { concurrency: 4, loadSampler: async () => CALM }, async () => {
    await waitFor(async () => (await db.query('SELECT id FROM sluice_jobs')).length === 0, {
      what: 'the live table empty',
    });
    await then?.();
  });
}

describe('a stored payload sluice could not have written', () => {
  it('is dead-lettered at once, unrun and unpacked, with SLUICE_PAYLOAD_REFUSED; the worker runs every other job', async () => {
    seen.clear();
    const bombText = bomb();
    const wideText = wide();
    expect(bombText.length).toBeGreaterThan(85_000);
    expect(wideText.length).toBeGreaterThan(400_000);
    const good = [await storedJob('{"n":1}')];
    const refused = {
      [await storedJob(bombText)]: `packed text of ${bombText.length} characters (sluice packs into at most 1024)`,
      [await storedJob(wideText)]: `packed text of ${wideText.length} characters (sluice packs into at most 1024)`,
      [await storedJob('', packed('{"n":2}'))]: 'packed text stored apart (sluice keeps packed payloads in their row)',
    };
    good.push(await storedJob('{"n":3}'));
    const sluice = db.open();
    const events = recordEvents(sluice);
    await drain(sluice, async () => {
      // Still claiming and running: a job enqueued after the refusals runs too.
      const { id } = await sluice.enqueue({ name: 'record', payload: { n: 4 } });
      good.push(id);
      await waitFor(async () => seen.has(id), { what: 'the job enqueued after the refusals run' });
    });

    expect(good.map((id) => seen.get(id))).toEqual([{ n: 1 }, { n: 3 }, { n: 4 }]);
    for (const [id, why] of Object.entries(refused).map(([id, why]) => [Number(id), why] as const)) {
      expect(seen.has(id)).toBe(false);
      // At once: one attempt of the four its max_retries allows.
      expect(await deadRow(db, id)).toMatchObject({
        retry_times: 1,
        last_error: expect.stringMatching(/^\[SLUICE_PAYLOAD_REFUSED\] PayloadRefusedError: payload refused: /),
      });
      expect(String((await deadRow(db, id))?.last_error)).toContain(why);
      const errors = await db.query('SELECT attempt, code, message FROM sluice_job_errors WHERE job_id = ?', [id]);
      expect(errors).toEqual([{ attempt: 1, code: 'SLUICE_PAYLOAD_REFUSED', message: `payload refused: ${why}` }]);
      expect(events['job:dead'].find((e) => e.jobId === id)).toMatchObject({
        error: { code: 'SLUICE_PAYLOAD_REFUSED' },
      });
    }
    expect(
      await db.query('SELECT id FROM sluice_dead_jobs WHERE id NOT IN (?)', [Object.keys(refused).map(Number)]),
    ).toEqual([]);
  });

  it('reaches the redaction hook as a marker saying why, never unpacked', async () => {
    const given: unknown[] = [];
    const sluice = db.open({
      redactPayload: ({ payload }) => {
        given.push(payload);
        return { kept: true };
      },
    });
    const id = await storedJob(bomb());
    const fine = await storedJob('{"n":5}');
    await drain(sluice);
    // Only the payload it could read (a failure here would print 63 MB of zeros: compare the count first).
    expect(given.length).toBe(1);
    expect(given[0]).toEqual({ n: 5 });
    const [dead] = await db.query<{ payload: string }>('SELECT payload FROM sluice_dead_jobs WHERE id = ?', [id]);
    expect(JSON.parse(String(dead?.payload))).toEqual({
      redacted: expect.stringMatching(/^payload refused: packed text of \d+ characters .*; the payload was not kept$/),
    });
    const [done] = await db.query<{ payload: string }>('SELECT payload FROM sluice_job_history WHERE job_id = ?', [
      fine,
    ]);
    expect(done?.payload).toBe('{"kept":true}');
  });
});
