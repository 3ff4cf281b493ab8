import { describe, expect, it } from 'vitest';
import { pruneDebounces } from '../../src/enqueue/pruneDebounces.ts';
import { JobValidationError } from '../../src/index.ts';
import { PAYLOAD_INLINE_MAX_BYTES } from '../../src/model/storedPayload.ts';
import { countRows, operationsOf } from '../helpers/factory.ts';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/flow-control.md "Debounce": one waiting job per (queue, key). A newer job with the key
 * replaces the waiting one's payload and name and pushes its start to NOW + delayMs, at most
 * maxWaitMs after the first enqueue; once the job has started, the next one starts a new debounce.
 * A payload stored apart is replaced where it is stored.
 */
const db = useTestDatabase('debounce');

const msUntil = async (id: number) =>
  Number(
    (
      await db.query<{ ms: number }>(
        'SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), run_at) DIV 1000 AS ms FROM sluice_jobs WHERE id = ?',
        [id],
      )
    )[0]?.ms,
  );

describe('debounce', () => {
  it('replaces the waiting job’s payload and name and pushes its start; last write wins', async () => {
    const debounce = { key: 'user:7', delayMs: 30_000 };
    const first = await db.sluice.enqueue({ name: 'digest', payload: { v: 1 }, debounce });
    expect(first.debounced).toBeUndefined();
    expect(await msUntil(first.id)).toBeGreaterThan(25_000);
    await db.query('UPDATE sluice_jobs SET run_at = NOW(3) + INTERVAL 5 SECOND WHERE id = ?', [first.id]);
    const second = await db.sluice.enqueue({ name: 'digest-v2', payload: { v: 2 }, debounce, priority: 3 });
    expect(second).toEqual({ id: first.id, duplicate: false, debounced: true });
    const [row] = await db.query<{ name: string; payload: string; priority: number }>(
      'SELECT name, payload, priority FROM sluice_jobs',
    );
    expect(row).toEqual({ name: 'digest-v2', payload: '{"v":2}', priority: 3 });
    expect(await msUntil(first.id)).toBeGreaterThan(25_000);
    const job = await db.sluice.jobs.get(first.id);
    expect(job?.flowHold).toEqual({ reason: 'debounced', group: null, debounceKey: 'user:7', until: job?.runAt });
    // Other keys, and the same key on another queue, debounce apart.
    await db.sluice.enqueue({ name: 'digest', payload: { v: 3 }, debounce: { ...debounce, key: 'user:8' } });
    await db.sluice.enqueue({ name: 'digest', queue: 'other', payload: { v: 4 }, debounce });
    expect(await countRows(db, 'sluice_jobs')).toBe(3);
  });

  it('caps the wait at maxWaitMs from the first enqueue, so a steady stream still runs', async () => {
    const debounce = { key: 'stream', delayMs: 60_000, maxWaitMs: 90_000 };
    const { id } = await db.sluice.enqueue({ name: 'n', debounce });
    // The first enqueue was 80 s ago: the cap leaves about 10 s, not the delay's 60 s.
    await db.query(
      "UPDATE sluice_job_debounces SET first_at = NOW(3) - INTERVAL 80 SECOND WHERE debounce_key = 'stream'",
    );
    expect((await db.sluice.enqueue({ name: 'n', debounce })).id).toBe(id);
    const left = await msUntil(id);
    expect(left).toBeGreaterThan(5_000);
    expect(left).toBeLessThanOrEqual(10_000);
  });

  it('once the job started, a new job with the key starts a new debounce', async () => {
    const debounce = { key: 'k', delayMs: 1_000 };
    const { id } = await db.sluice.enqueue({ name: 'n', payload: { v: 1 }, debounce });
    await db.query("UPDATE sluice_jobs SET lock_id = 'host-1~claimed' WHERE id = ?", [id]);
    const next = await db.sluice.enqueue({ name: 'n', payload: { v: 2 }, debounce });
    expect(next.id).not.toBe(id);
    expect(next.debounced).toBeUndefined();
    // The running job kept its payload; the key now names the new job.
    expect(await db.query('SELECT id, payload FROM sluice_jobs ORDER BY id')).toEqual([
      { id, payload: '{"v":1}' },
      { id: next.id, payload: '{"v":2}' },
    ]);
    expect((await db.sluice.enqueue({ name: 'n', payload: { v: 3 }, debounce })).id).toBe(next.id);
  });

  it('replaces a payload stored apart, and drops it when the new one fits in the row', async () => {
    const debounce = { key: 'big', delayMs: 10_000 };
    const big = (c: string) => ({ c, text: randomText(PAYLOAD_INLINE_MAX_BYTES * 2) });
    const { id } = await db.sluice.enqueue({ name: 'n', payload: big('a'), debounce });
    await db.sluice.enqueue({ name: 'n', payload: big('b'), debounce });
    const apart = await db.query<{ payload: string }>('SELECT payload FROM sluice_job_payloads WHERE job_id = ?', [id]);
    expect(JSON.parse(apart[0]?.payload ?? '{}')).toEqual(big('b'));
    expect((await db.sluice.jobs.get(id))?.payload).toEqual(big('b'));
    await db.sluice.enqueue({ name: 'n', payload: { small: true }, debounce });
    expect(await countRows(db, 'sluice_job_payloads')).toBe(0);
    expect((await db.sluice.jobs.get(id))?.payload).toEqual({ small: true });
  });

  it('inside the caller’s transaction: a rollback leaves nothing, and the key free', async () => {
    const debounce = { key: 'rolled', delayMs: 1_000 };
    await db.sluice.knex
      .transaction(async (trx) => {
        await db.sluice.enqueue({ name: 'n', payload: { v: 1 }, debounce }, { trx });
        throw new Error('business rule failed');
      })
      .catch(() => undefined);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_job_debounces')).toBe(0);
  });

  it('refuses a bad debounce, or one in a batch, naming the field; nothing written', async () => {
    const bad: [unknown, string][] = [
      [{ name: 'n', debounce: { key: 'k', delayMs: -1 } }, 'debounce.delayMs'],
      [{ name: 'n', debounce: { key: 'k', delayMs: 10, maxWaitMs: 5 } }, 'debounce.maxWaitMs'],
      [{ name: 'n', debounce: { key: 'k', delayMs: 10 }, delayMs: 5 }, 'debounce'],
      [{ name: 'n', debounce: { key: 'k', delayMs: 10 } }, 'debounce'],
    ];
    for (const [job, field] of bad) {
      const error = await db.sluice.enqueueBatch([{ name: 'ok' }, job as never]).catch((e: unknown) => e);
      expect(error, JSON.stringify(job)).toBeInstanceOf(JobValidationError);
      expect(error).toMatchObject({ index: 1, field });
    }
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
  });
});

describe('pruneDebounces', () => {
  it('deletes the keys whose job is gone, and keeps those of live jobs', async () => {
    const live = await db.sluice.enqueue({ name: 'n', debounce: { key: 'live', delayMs: 60_000 } });
    const done = await db.sluice.enqueue({ name: 'n', debounce: { key: 'done', delayMs: 60_000 } });
    await db.query('DELETE FROM sluice_jobs WHERE id = ?', [done.id]);
    const { exec, tables } = operationsOf(db);
    expect(await pruneDebounces({ db: exec, tables }).runOnce()).toEqual({ pruned: 1 });
    expect(await db.query('SELECT debounce_key, job_id FROM sluice_job_debounces')).toEqual([
      { debounce_key: 'live', job_id: live.id },
    ]);
  });
});
