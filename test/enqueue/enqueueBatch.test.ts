import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('enqueue_batch');

async function countJobs(): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs');
  return Number(row?.n);
}

describe('enqueueBatch', () => {
  it('rejects a 10,000-job batch whose job 9,999 is bad, naming that index, and writes nothing', async () => {
    const jobs = Array.from({ length: 10_000 }, (_, n) => ({ name: 'work', payload: { n } }));
    jobs[9_999] = { name: 'work', payload: { n: 10n } as never };
    const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 9_999, field: 'payload', code: 'SLUICE_JOB_INVALID' });
    expect((error as Error).message).toContain('job 9999: payload is not JSON-serialisable');
    expect(await countJobs()).toBe(0);
    expect(await db.query('SELECT * FROM sluice_batches')).toEqual([]);
  });
});
