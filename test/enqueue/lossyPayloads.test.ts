import { describe, expect, it } from 'vitest';
import { type JobSpec, JobValidationError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/jobs.md "Payloads": a payload JSON would store changed — a function, a Map, NaN, a hole —
 * is refused at the call, naming its path, and nothing is written; what JSON converts that the
 * docs name (a Date, a toJSON, an undefined key, -0) is stored as documented.
 */
const db = useTestDatabase('lossy_payloads');

class Point {
  constructor(
    readonly x: number,
    readonly y: number,
  ) {}
}

class Money {
  constructor(readonly cents: number) {}
  toJSON(): unknown {
    return { cents: this.cents, currency: 'EUR' };
  }
}

/** [1, <hole>, 3]: index 1 never set. */
function holed(): number[] {
  const list = new Array<number>(3);
  list[0] = 1;
  list[2] = 3;
  return list;
}

function cyclic(): unknown {
  const order: Record<string, unknown> = { lines: [{ sku: 'a' }] };
  (order.lines as Record<string, unknown>[])[0] = { sku: 'a', order };
  return { order };
}

/** Each payload, the path its error names, and what the reason says. */
const LOSSY: { what: string; payload: unknown; path: string; reason: string }[] = [
  { what: 'a function', payload: { f: () => 1 }, path: 'payload.f', reason: 'is a function, which JSON leaves out' },
  {
    what: 'a Map',
    payload: { m: new Map([['a', 1]]) },
    path: 'payload.m',
    reason: 'is a Map, which JSON stores as {}',
  },
  { what: 'a Set', payload: { s: new Set([1]) }, path: 'payload.s', reason: 'is a Set, which JSON stores as {}' },
  {
    what: 'NaN deep in an array',
    payload: { items: [{ price: 1 }, { price: 2 }, { price: 3 }, { price: Number.NaN }] },
    path: 'payload.items[3].price',
    reason: 'is NaN, which JSON stores as null',
  },
  { what: 'Infinity', payload: { x: Number.POSITIVE_INFINITY }, path: 'payload.x', reason: 'is Infinity' },
  { what: 'a BigInt', payload: { n: 10n }, path: 'payload.n', reason: 'is a BigInt, which JSON cannot store' },
  {
    what: 'an invalid Date',
    payload: { at: new Date('nope') },
    path: 'payload.at',
    reason: 'is an invalid Date, which JSON stores as null',
  },
  {
    what: 'a class instance',
    payload: { p: new Point(1, 2) },
    path: 'payload.p',
    reason: 'is an instance of Point, which JSON stores as a plain object of its own fields',
  },
  {
    what: 'an Error',
    payload: { cause: new Error('x') },
    path: 'payload.cause',
    reason: 'is an instance of Error',
  },
  {
    what: 'a symbol key',
    payload: { meta: { [Symbol('secret')]: 1 } },
    path: 'payload.meta',
    reason: 'has a symbol key (Symbol(secret)), which JSON leaves out',
  },
  { what: 'a symbol value', payload: { s: Symbol('s') }, path: 'payload.s', reason: 'is a symbol' },
  {
    what: 'a hole',
    payload: { list: holed() },
    path: 'payload.list[1]',
    reason: 'is undefined (or a hole), which JSON stores as null',
  },
  {
    what: 'undefined in an array',
    payload: [undefined],
    path: 'payload[0]',
    reason: 'is undefined (or a hole), which JSON stores as null',
  },
  {
    what: 'a function in an array',
    payload: { fns: [() => 1] },
    path: 'payload.fns[0]',
    reason: 'is a function, which JSON stores as null',
  },
  {
    what: 'a cycle',
    payload: cyclic(),
    path: 'payload.order.lines[0].order',
    reason: 'is an object that contains it (a cycle)',
  },
  {
    what: 'a key that is no identifier',
    payload: { 'first name': { v: Number.NaN } },
    path: 'payload["first name"].v',
    reason: 'is NaN',
  },
  {
    what: 'a toJSON that returns NaN',
    payload: { v: { toJSON: () => Number.NaN } },
    path: 'payload.v',
    reason: 'is NaN',
  },
];

function numbered(count: number): JobSpec[] {
  return Array.from({ length: count }, (_, n) => ({ name: 'work', payload: { n } }));
}

async function nothingWritten(): Promise<void> {
  expect(await countRows(db, 'sluice_jobs')).toBe(0);
  expect(await countRows(db, 'sluice_job_payloads')).toBe(0);
  expect(await countRows(db, 'sluice_batches')).toBe(0);
}

describe('a payload JSON would store changed', () => {
  it.each(LOSSY)('$what: refused by enqueueBatch at its index and path, nothing written', async (lossy) => {
    const jobs = [...numbered(3), { name: 'work', payload: lossy.payload }, ...numbered(3)];
    const error = await db.sluice.enqueueBatch(jobs).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JobValidationError);
    expect(error).toMatchObject({ index: 3, field: lossy.path, code: 'SLUICE_JOB_INVALID' });
    expect((error as Error).message).toContain(`job 3: ${lossy.path} ${lossy.reason}`);
    await nothingWritten();
  });

  it.each(LOSSY)('$what: refused by enqueue, nothing written', async (lossy) => {
    const error = await db.sluice.enqueue({ name: 'work', payload: lossy.payload }).catch((e: unknown) => e);
    expect(error).toMatchObject({ index: 0, field: lossy.path });
    expect((error as Error).message).toContain(`${lossy.path} ${lossy.reason}`);
    await nothingWritten();
  });

  it('refused in a batch’s completion job, named as its field', async () => {
    const error = await db.sluice
      .enqueueBatch(numbered(2), { onComplete: { name: 'done', payload: { report: { rows: new Map() } } } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ index: -1, field: 'onComplete.payload.report.rows' });
    expect((error as Error).message).toContain('batch: onComplete.payload.report.rows is a Map');
    await nothingWritten();
  });

  it('refused inside the caller’s transaction, which stays usable and writes nothing of sluice’s', async () => {
    await db.sluice.knex.transaction(async (trx) => {
      const error = await db.sluice
        .enqueueBatch([{ name: 'work', payload: { total: Number.NaN } }], { trx })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ field: 'payload.total' });
      await trx.raw('SELECT 1');
    });
    await nothingWritten();
  });
});

describe('a payload of plain data, and what the docs say is converted', () => {
  it('is stored as JSON writes it: a Date as its ISO text, a toJSON as its value, an undefined key left out, -0 as 0', async () => {
    const payload = {
      at: new Date('2030-01-02T03:04:05.678Z'),
      price: new Money(1250),
      note: undefined,
      delta: -0,
      tags: ['a', null, { deep: [true, 1.5, 'x'] }],
      bare: Object.assign(Object.create(null) as object, { k: 1 }),
      bytes: Buffer.from('hi'),
    };
    const { id } = await db.sluice.enqueue({ name: 'work', payload });
    const [row] = await db.query<{ payload: string }>('SELECT payload FROM sluice_jobs WHERE id = ?', [id]);
    expect(JSON.parse(row?.payload as string)).toEqual({
      at: '2030-01-02T03:04:05.678Z',
      price: { cents: 1250, currency: 'EUR' },
      delta: 0,
      tags: ['a', null, { deep: [true, 1.5, 'x'] }],
      bare: { k: 1 },
      bytes: { type: 'Buffer', data: [104, 105] },
    });
    expect(row?.payload).toBe(JSON.stringify(payload));
  });
});
