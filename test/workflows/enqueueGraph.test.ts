import { describe, expect, it } from 'vitest';
import { JobValidationError } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('enqueue_graph');

async function count(table: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM sluice_${table}`);
  return Number(row?.n);
}

async function nothingWritten(): Promise<void> {
  for (const table of ['jobs', 'batches', 'job_edges', 'job_holds']) expect(await count(table)).toBe(0);
}

describe('a workflow enqueued with its batch', () => {
  it('writes a diamond: edges, holds with their waiting counts, flags, and parks the children', async () => {
    const { batchId } = await db.sluice.enqueueBatch([
      { name: 'a', ref: 'a' },
      { name: 'b', ref: 'b', parents: ['a'] },
      { name: 'c', ref: 'c', parents: ['a'], continueOnFailure: true },
      { name: 'd', parents: ['b', { job: 'c', continueOnFailure: true }] },
    ]);
    const jobs = await db.query<{ id: number; name: string; flags: number; held: number }>(
      `SELECT id, name, flags, run_at = '9999-12-31 23:59:59.000' AS held FROM sluice_jobs WHERE batch_id = ? ORDER BY id`,
      [batchId],
    );
    const id = Object.fromEntries(jobs.map((j) => [j.name, Number(j.id)]));
    expect(jobs.map((j) => [j.name, j.flags, Number(j.held)])).toEqual([
      ['a', 1, 0],
      ['b', 3, 1],
      ['c', 3, 1],
      ['d', 2, 1],
    ]);
    const edges = await db.query<{ parent_id: number; child_id: number; continue_on_failure: number }>(
      'SELECT parent_id, child_id, continue_on_failure FROM sluice_job_edges ORDER BY parent_id, child_id',
    );
    expect(edges.map((e) => [Number(e.parent_id), Number(e.child_id), Number(e.continue_on_failure)])).toEqual([
      [id.a, id.b, 0],
      [id.a, id.c, 1],
      [id.b, id.d, 0],
      [id.c, id.d, 1],
    ]);
    const holds = await db.query<{ job_id: number; waiting_parents: number; reason: string }>(
      'SELECT job_id, waiting_parents, reason FROM sluice_job_holds ORDER BY job_id',
    );
    expect(holds.map((h) => [Number(h.job_id), h.waiting_parents, h.reason])).toEqual([
      [id.b, 1, 'parents'],
      [id.c, 1, 'parents'],
      [id.d, 2, 'parents'],
    ]);
  });

  it('maps refs to ids across many INSERT chunks', async () => {
    const small = db.open({ maxRowsPerInsert: 7 });
    const jobs = [
      ...Array.from({ length: 50 }, (_, n) => ({ name: 'leaf', ref: `leaf${n}`, payload: { n } })),
      { name: 'fanIn', parents: Array.from({ length: 50 }, (_, n) => `leaf${n}`) },
    ];
    await small.enqueueBatch(jobs);
    const [wrong] = await db.query<{ n: number }>(
      `SELECT COUNT(*) AS n FROM sluice_job_edges e JOIN sluice_jobs p ON p.id = e.parent_id
       JOIN sluice_jobs c ON c.id = e.child_id WHERE p.name <> 'leaf' OR c.name <> 'fanIn'`,
    );
    expect(Number(wrong?.n)).toBe(0);
    const parents = await db.query<{ n: string }>(
      `SELECT JSON_UNQUOTE(JSON_EXTRACT(p.payload, '$.n')) AS n FROM sluice_job_edges e JOIN sluice_jobs p ON p.id = e.parent_id`,
    );
    expect(parents.map((p) => Number(p.n)).sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, n) => n));
  });

  it('names a live job by id, and refuses a finished or missing one with nothing written', async () => {
    const { id } = await db.sluice.enqueue({ name: 'parent' });
    await db.sluice.enqueueBatch([{ name: 'child', parents: [id] }]);
    const [parent] = await db.query<{ flags: number }>('SELECT flags FROM sluice_jobs WHERE id = ?', [id]);
    expect(parent?.flags).toBe(1);
    await db.query('TRUNCATE sluice_jobs');
    await db.query('TRUNCATE sluice_batches');
    await db.query('TRUNCATE sluice_job_edges');
    await db.query('TRUNCATE sluice_job_holds');
    const error = await db.sluice
      .enqueueBatch([{ name: 'x' }, { name: 'child', parents: [id] }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 1, field: 'parents' });
    expect(String((error as Error).message)).toContain(`job ${id}`);
    await nothingWritten();
  });

  it.each([
    ['an unknown ref', [{ name: 'a', parents: ['nope'] }], 0, 'parents[0]', 'unknown ref "nope"'],
    [
      'a cycle',
      [
        { name: 'a', ref: 'a', parents: ['c'] },
        { name: 'b', ref: 'b', parents: ['a'] },
        { name: 'c', ref: 'c', parents: ['b'] },
      ],
      0,
      'parents[0]',
      'cycle',
    ],
    ['a job its own parent', [{ name: 'a', ref: 'a', parents: ['a'] }], 0, 'parents[0]', 'cycle'],
    [
      'a ref twice',
      [
        { name: 'a', ref: 'a' },
        { name: 'b', ref: 'a' },
      ],
      1,
      'ref',
      'repeats',
    ],
    [
      'a parent named twice',
      [
        { name: 'a', ref: 'a' },
        { name: 'b', parents: ['a', 'a'] },
      ],
      1,
      'parents[1]',
      'twice',
    ],
    ['a bad parent', [{ name: 'a', parents: [{ job: -3 }] }], 0, 'parents[0]', 'ref'],
    [
      'a keyed parent',
      [
        { name: 'a', ref: 'a', idempotencyKey: 'k' },
        { name: 'b', parents: ['a'] },
      ],
      1,
      'parents[0]',
      'idempotencyKey',
    ],
  ] as const)(
    'refuses %s, naming the job and the reference, with nothing written',
    async (_, jobs, index, field, says) => {
      const error = await db.sluice.enqueueBatch(jobs as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index, field });
      expect((error as Error).message).toContain(says);
      await nothingWritten();
    },
  );

  it('writes the graph inside the caller transaction, and rolls it back with it', async () => {
    await db.sluice.knex
      .transaction(async (trx) => {
        await db.sluice.enqueueBatch(
          [
            { name: 'a', ref: 'a' },
            { name: 'b', parents: ['a'] },
          ],
          { trx },
        );
        throw new Error('the app changed its mind');
      })
      .catch(() => undefined);
    await nothingWritten();
    await db.sluice.knex.transaction(async (trx) => {
      await db.sluice.enqueueBatch(
        [
          { name: 'a', ref: 'a' },
          { name: 'b', parents: ['a'] },
        ],
        { trx },
      );
    });
    expect(await count('job_edges')).toBe(1);
    expect(await count('job_holds')).toBe(1);
  });

  it('refuses parents on a single enqueue', async () => {
    await expect(db.sluice.enqueue({ name: 'a', parents: [1] })).rejects.toMatchObject({ field: 'parents' });
  });
});
