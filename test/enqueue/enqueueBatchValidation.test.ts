import { describe, expect, it } from 'vitest';
import { type JobSpec, JobValidationError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** enqueueBatch rejects an invalid job before writing anything, naming its index and field. */
const db = useTestDatabase('enqueue_batch_validation');

async function countJobs(): Promise<number> {
  const [row] = await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_jobs');
  return Number(row?.n);
}

function numbered(count: number, extra: Partial<JobSpec> = {}): JobSpec[] {
  return Array.from({ length: count }, (_, n) => ({ name: 'work', payload: { n }, ...extra }));
}

describe('enqueueBatch', () => {
  it('rejects a 10,000-job batch whose job 9,999 is bad, naming that index, and writes nothing', async () => {
    const jobs = Array.from({ length: 10_000 }, (_, n) => ({ name: 'work', payload: { n } }));
    jobs[9_999] = { name: 'work', payload: { n: 10n } as never };
    const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 9_999, field: 'payload.n', code: 'SLUICE_JOB_INVALID' });
    expect((error as Error).message).toContain('job 9999: payload.n is a BigInt, which JSON cannot store');
    expect(await countJobs()).toBe(0);
    expect(await db.query('SELECT * FROM sluice_batches')).toEqual([]);
  });

  describe('rejects an invalid job, naming its index and field, and writes nothing', () => {
    const cases: {
      what: string;
      job: Record<string, unknown>;
      field: string;
      text: string;
      options?: { maxPayloadBytes: number };
    }[] = [
      {
        what: 'a name with a space',
        job: { name: 'bad name' },
        field: 'name',
        text: 'job 3: name must be 1–128 characters',
      },
      { what: 'a missing name', job: { payload: {} }, field: 'name', text: 'job 3: name' },
      {
        what: 'a queue too long',
        job: { name: 'work', queue: 'q'.repeat(65) },
        field: 'queue',
        text: 'job 3: queue must be 1–64 characters',
      },
      {
        what: 'a fractional priority',
        job: { name: 'work', priority: 1.5 },
        field: 'priority',
        text: 'job 3: priority must be an integer',
      },
      {
        what: 'a priority out of range',
        job: { name: 'work', priority: 40_000 },
        field: 'priority',
        text: 'job 3: priority',
      },
      {
        what: 'runAt as a string',
        job: { name: 'work', runAt: '2030-01-01' },
        field: 'runAt',
        text: 'job 3: runAt must be a valid Date',
      },
      {
        what: 'an invalid Date',
        job: { name: 'work', runAt: new Date('nope') },
        field: 'runAt',
        text: 'job 3: runAt must be a valid Date',
      },
      {
        what: 'delayMs and runAt together',
        job: { name: 'work', runAt: new Date(), delayMs: 10 },
        field: 'runAt',
        text: 'job 3: runAt and delayMs cannot both be set',
      },
      {
        what: 'a negative delayMs',
        job: { name: 'work', delayMs: -1 },
        field: 'delayMs',
        text: 'job 3: delayMs must be',
      },
      {
        what: 'a negative maxRetries',
        job: { name: 'work', maxRetries: -1 },
        field: 'maxRetries',
        text: 'job 3: maxRetries must be an integer',
      },
      {
        what: 'an unknown field',
        job: { name: 'work', prio: 1 },
        field: 'prio',
        text: 'job 3: prio is not a job field',
      },
      {
        what: 'an empty idempotencyKey',
        job: { name: 'work', idempotencyKey: '' },
        field: 'idempotencyKey',
        text: 'job 3: idempotencyKey',
      },
      {
        what: 'a payload over maxPayloadBytes',
        job: { name: 'work', payload: { text: 'x'.repeat(200) } },
        field: 'payload',
        text: 'job 3: payload is 211 bytes as JSON, over the limit of 100',
        options: { maxPayloadBytes: 100 },
      },
    ];

    it.each(cases)('$what', async ({ job, field, text, options }) => {
      const sluice = options ? db.open(options) : db.sluice;
      const jobs: JobSpec[] = [...numbered(3, { payload: { small: true } }), job as unknown as JobSpec, ...numbered(3)];
      const error = await sluice.enqueueBatch(jobs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 3, field, code: 'SLUICE_JOB_INVALID' });
      expect((error as Error).message).toContain(text);
      expect(await countJobs()).toBe(0);
      expect(await countRows(db, 'sluice_batches')).toBe(0);
    });

    it('an idempotencyKey repeated inside the batch (same queue)', async () => {
      const jobs: JobSpec[] = [
        { name: 'work', idempotencyKey: 'k1' },
        { name: 'work', idempotencyKey: 'k2' },
        { name: 'work', idempotencyKey: 'k1', queue: 'other' },
        { name: 'work', idempotencyKey: 'k2' },
      ];
      const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 3, field: 'idempotencyKey' });
      expect((error as Error).message).toContain('job 3: idempotencyKey repeats a key');
      expect(await countJobs()).toBe(0);
      expect(await countRows(db, 'sluice_batches')).toBe(0);
    });

    it('a single enqueue() with a bad job names index 0 and writes nothing', async () => {
      const error = await db.sluice.enqueue({ name: 'work', priority: 'high' as never }).catch((e: unknown) => e);
      expect(error).toMatchObject({ index: 0, field: 'priority', code: 'SLUICE_JOB_INVALID' });
      expect(await countJobs()).toBe(0);
    });
  });
});
