import { describe, expect, it } from 'vitest';
import { createSluice, defineJob, JobValidationError, OptionsError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { testLogger, useTestDatabase } from '../helpers/testDatabase.ts';
import { withWorker } from '../helpers/workerHarness.ts';

const db = useTestDatabase('hostile_input');

describe('idempotency keys the server would read differently', () => {
  it('a key with a lone surrogate (emoji text cut in half) is refused, and nothing is written', async () => {
    const cut = '🎉🎉'.slice(0, 3); // one whole emoji and half of the next
    const error = await db.sluice.enqueue({ name: 'work', idempotencyKey: cut }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ field: 'idempotencyKey' });
    expect((error as Error).message).toContain('lone surrogate');
    expect(await countRows(db, 'sluice_idempotency_keys')).toBe(0);
    // A well-formed key with emoji works, and a second enqueue of it is a duplicate.
    const first = await db.sluice.enqueue({ name: 'work', idempotencyKey: '🎉' });
    expect(await db.sluice.enqueue({ name: 'work', idempotencyKey: '🎉' })).toEqual({ id: first.id, duplicate: true });
  });

  it('a key ending in a space is refused: the server would compare it equal to the key without', async () => {
    await db.sluice.enqueue({ name: 'work', idempotencyKey: 'invoice-42' });
    const error = await db.sluice
      .enqueueBatch([{ name: 'work' }, { name: 'work', idempotencyKey: 'invoice-42 ' }])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ index: 1, field: 'idempotencyKey' });
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
  });

  it('no reservation outlives its enqueue without a job', async () => {
    await db.sluice.enqueueBatch([
      { name: 'work', idempotencyKey: 'a' },
      { name: 'work', idempotencyKey: 'b' },
    ]);
    expect(await countRows(db, 'sluice_idempotency_keys', 'job_id IS NULL')).toBe(0);
  });
});

describe('names and prefixes', () => {
  it('pausing a queue name no job could carry is refused', async () => {
    await expect(db.sluice.queues.pause('q'.repeat(65))).rejects.toBeInstanceOf(OptionsError);
    await expect(db.sluice.queues.pause("mail' OR 1=1")).rejects.toBeInstanceOf(OptionsError);
    expect(await countRows(db, 'sluice_queues')).toBe(0);
  });

  it('a prefix ending in dead_ is refused: app_dead_ + jobs is app_ + dead_jobs', () => {
    expect(() => createSluice({ url: db.url, tablePrefix: 'app_dead_', logger: testLogger })).toThrow(OptionsError);
    expect(() => createSluice({ url: db.url, tablePrefix: 'app_', logger: testLogger }).close()).not.toThrow();
  });

  it('a worker on 20 queues with 64-character names registers and runs', async () => {
    const queues = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')}${'q'.repeat(62)}`);
    const sluice = db.open();
    const ok = defineJob({ name: 'ok', handle() {} });
    await withWorker(sluice, [ok], { queues }, async () => {
      const [row] = await db.query<{ queues: string }>('SELECT queues FROM sluice_workers');
      expect(row?.queues.split(',')).toEqual(queues);
    });
  });
});
