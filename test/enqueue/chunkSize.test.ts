import { describe, expect, it } from 'vitest';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A batch goes in as few statements as the server's packet limit and the chunk size allow: a
 * chunk gathers jobs by their text's length and is split by bytes only when rendered, so ASCII
 * payloads of kilobytes fill statements rather than a third of each.
 */
const db = useTestDatabase('chunk_size');

describe('a batch of kilobyte payloads', () => {
  it('fills its statements: 1,000 jobs of 3 KB (3 MB of text) in one INSERT of the jobs and one of their payloads', async () => {
    let chunks = 0;
    const onEnqueued = (e: { chunks: number }) => {
      chunks = e.chunks;
    };
    db.sluice.events.on('batch:enqueued', onEnqueued);
    try {
      const jobs = Array.from({ length: 1_000 }, (_, n) => ({
        name: 'kb',
        payload: { n, text: randomText(3_000, n) },
      }));
      expect((await db.sluice.enqueueBatch(jobs)).count).toBe(1_000);
    } finally {
      db.sluice.events.off('batch:enqueued', onEnqueued);
    }
    expect(chunks).toBe(1);
    const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_job_payloads');
    expect(Number(row?.n)).toBe(1_000);
  });
});
