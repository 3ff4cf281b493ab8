import { describe, expect, it } from 'vitest';
import { defineJob, JobDefinitionError, JobValidationError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { recordEvents } from '../helpers/workerHarness.ts';

/**
 * docs/flow-control.md "Throttle": at most one job per (queue, key) per window. Extras are dropped,
 * nothing of them written, and reported: `throttled` on the enqueue's result, an
 * `enqueue:throttled` event. Idempotency keys keep working beside it.
 */
const db = useTestDatabase('throttle');

describe('throttle', () => {
  it('keeps the first job of a key per window, drops and reports the others, and keys are per queue', async () => {
    const sluice = db.open();
    const events = recordEvents(sluice);
    const throttle = { key: 'digest:42', windowMs: 60_000 };
    const first = await sluice.enqueue({ name: 'digest', payload: { n: 1 }, throttle });
    expect(first).toMatchObject({ duplicate: false });
    expect(first.throttled).toBeUndefined();
    const second = await sluice.enqueue({ name: 'digest', payload: { n: 2 }, throttle });
    expect(second).toEqual({ id: first.id, duplicate: false, throttled: true });
    // In a batch: the window is taken, and of two jobs of a new key only the first is kept.
    const batch = await sluice.enqueueBatch([
      { name: 'digest', payload: { n: 3 }, throttle },
      { name: 'digest', payload: { n: 4 }, throttle: { key: 'digest:43', windowMs: 60_000 } },
      { name: 'digest', payload: { n: 5 }, throttle: { key: 'digest:43', windowMs: 60_000 } },
      { name: 'digest', payload: { n: 6 }, queue: 'other', throttle },
      { name: 'digest', payload: { n: 7 } },
    ]);
    expect(batch).toMatchObject({ count: 3, skipped: 0, throttled: 2 });
    const payloads = await db.query<{ payload: string }>('SELECT payload FROM sluice_jobs ORDER BY id');
    expect(payloads.map((r) => JSON.parse(r.payload).n)).toEqual([1, 4, 6, 7]);
    expect(events['enqueue:throttled'].map((e) => e.count)).toEqual([1, 2]);
    await sluice.close();
  });

  it('per definition: debounce and throttle keys made from the payload; a job’s own wins; a bad key refused', async () => {
    const digest = defineJob<{ user: number; n: number }>({
      name: 'digest',
      throttle: { key: (p) => `digest:${p.user}`, windowMs: 60_000 },
      handle: () => undefined,
    });
    const first = await db.sluice.enqueue(digest, { user: 1, n: 1 });
    expect(await db.sluice.enqueue(digest, { user: 1, n: 2 })).toEqual({
      id: first.id,
      duplicate: false,
      throttled: true,
    });
    expect((await db.sluice.enqueue(digest, { user: 2, n: 3 })).throttled).toBeUndefined();
    // A job's own throttle wins over the definition's.
    const own = await db.sluice.enqueue(digest, { user: 1, n: 4 }, { throttle: { key: 'other', windowMs: 60_000 } });
    expect(own.throttled).toBeUndefined();
    const sync = defineJob<{ account: string; v: number }>({
      name: 'sync',
      debounce: { key: (p) => `sync:${p.account}`, delayMs: 60_000 },
      handle: () => undefined,
    });
    const a = await db.sluice.enqueue(sync, { account: 'a', v: 1 });
    const b = await db.sluice.enqueue(sync, { account: 'a', v: 2 });
    expect(b).toMatchObject({ id: a.id, debounced: true });
    const payloads = await db.query<{ payload: string }>("SELECT payload FROM sluice_jobs WHERE name = 'sync'");
    expect(payloads.map((r) => JSON.parse(r.payload))).toEqual([{ account: 'a', v: 2 }]);
    expect(await countRows(db, 'sluice_jobs', "name = 'digest'")).toBe(3);
    expect(() =>
      defineJob({ name: 'bad', throttle: { key: 7 as unknown as string, windowMs: 1 }, handle: () => undefined }),
    ).toThrow(JobDefinitionError);
  });

  it('opens the next window once the last one ended, whatever became of its job', async () => {
    const throttle = { key: 'k', windowMs: 60_000 };
    const { id } = await db.sluice.enqueue({ name: 'n', throttle });
    // The window ends (backdated: the test never sleeps).
    await db.query(
      "UPDATE sluice_idempotency_keys SET expires_at = NOW(3) - INTERVAL 1 SECOND WHERE idempotency_key = 'sluice:throttle:k'",
    );
    const next = await db.sluice.enqueue({ name: 'n', throttle });
    expect(next.id).not.toBe(id);
    expect(next.throttled).toBeUndefined();
    expect(await countRows(db, 'sluice_jobs')).toBe(2);
  });

  it('inside the caller’s transaction: a rollback takes the window back with the job', async () => {
    const throttle = { key: 'in-trx', windowMs: 60_000 };
    await db.sluice.knex
      .transaction(async (trx) => {
        await db.sluice.enqueue({ name: 'n', throttle }, { trx });
        throw new Error('business rule failed');
      })
      .catch(() => undefined);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_idempotency_keys')).toBe(0);
    expect((await db.sluice.enqueue({ name: 'n', throttle })).throttled).toBeUndefined();
  });

  it('refuses a bad throttle, or one with an idempotency key, naming the field; nothing written', async () => {
    const bad: [unknown, string][] = [
      [{ name: 'n', throttle: { key: '', windowMs: 1000 } }, 'throttle.key'],
      [{ name: 'n', throttle: { key: 'k', windowMs: 0 } }, 'throttle.windowMs'],
      [{ name: 'n', throttle: { key: 'x'.repeat(180), windowMs: 1000 } }, 'throttle.key'],
      [{ name: 'n', throttle: { key: 'k', windowMs: 1000 }, idempotencyKey: 'i' }, 'throttle'],
    ];
    for (const [job, field] of bad) {
      const error = await db.sluice.enqueueBatch([{ name: 'ok' }, job as never]).catch((e: unknown) => e);
      expect(error, JSON.stringify(job)).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 1, field });
    }
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
  });
});
