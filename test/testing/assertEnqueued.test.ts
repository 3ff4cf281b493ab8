import type { AssertionError } from 'node:assert';
import { describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/index.ts';
import { assertEnqueued, enqueuedJobs, refuteEnqueued } from '../../src/testing/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('testing_enqueued');

async function failure(promise: Promise<unknown>): Promise<AssertionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!error) throw new Error('expected the assertion to fail');
  return error as AssertionError;
}

/** The ids of the live jobs, as the table holds them. */
async function liveIds(): Promise<number[]> {
  return (await db.query<{ id: number }>('SELECT id FROM sluice_jobs ORDER BY id')).map((r) => Number(r.id));
}

describe('enqueuedJobs', () => {
  it('lists live jobs by name, queue and a part of the payload, oldest first, payloads decoded wherever stored', async () => {
    const big = 'x'.repeat(5_000); // stored packed in its row
    const wide = Array.from({ length: 300 }, (_, i) => `${i}-${Math.random()}`); // stored apart
    await db.sluice.enqueueBatch([
      { name: 'mail', queue: 'q1', payload: { to: 'ann', meta: { lang: 'en', tries: 1 } } },
      { name: 'mail', queue: 'q2', payload: { to: 'bob', meta: { lang: 'de' } }, delayMs: 60_000 },
      { name: 'other', queue: 'q1', payload: { big } },
      { name: 'other', queue: 'q1', payload: { wide }, ref: 'a' },
      { name: 'child', queue: 'q1', payload: {}, parents: ['a'] },
    ]);
    const ids = await liveIds();
    expect((await enqueuedJobs(db.sluice)).map((j) => j.id)).toEqual(ids);
    expect((await enqueuedJobs(db.sluice, { name: 'mail' })).map((j) => j.payload)).toEqual([
      { to: 'ann', meta: { lang: 'en', tries: 1 } },
      { to: 'bob', meta: { lang: 'de' } },
    ]);
    expect((await enqueuedJobs(db.sluice, { queue: 'q2' })).map((j) => j.id)).toEqual([ids[1]]);
    expect((await enqueuedJobs(db.sluice, { payload: { meta: { lang: 'en' } } })).map((j) => j.id)).toEqual([ids[0]]);
    expect((await enqueuedJobs(db.sluice, { payload: { big } })).map((j) => j.id)).toEqual([ids[2]]);
    expect((await enqueuedJobs(db.sluice, { payload: { wide } })).map((j) => j.id)).toEqual([ids[3]]);
    const [held] = await enqueuedJobs(db.sluice, { name: 'child' });
    expect(held).toMatchObject({ runAt: null, claimed: false, queue: 'q1', payload: {} });
  });

  it('reports a stored payload that does not decode on its job instead of throwing', async () => {
    const { id } = await db.sluice.enqueue({ name: 'mail', payload: { to: 'ann' } });
    await db.query("UPDATE sluice_jobs SET payload = 'deflate:!!not-base64' WHERE id = ?", [id]);
    const [job] = await enqueuedJobs(db.sluice);
    expect(job?.payload).toBeUndefined();
    expect(job?.payloadError).toMatch(/^the stored payload does not decode: /);
    expect(await enqueuedJobs(db.sluice, { payload: { to: 'ann' } })).toEqual([]);
  });

  it('refuses to return a shortened list: more than limit live jobs of the filter is an error', async () => {
    await db.sluice.enqueueBatch(Array.from({ length: 4 }, () => ({ name: 'mail', queue: 'q1' })));
    expect(await enqueuedJobs(db.sluice, { name: 'mail' }, { limit: 4 })).toHaveLength(4);
    await expect(enqueuedJobs(db.sluice, { name: 'mail', queue: 'q1' }, { limit: 3 })).rejects.toMatchObject({
      code: 'SLUICE_TESTING_TOO_MANY',
      message: 'enqueuedJobs: more than 3 live jobs on queue q1 named mail: narrow the filter or raise limit',
    });
  });

  it('sees inside the caller’s transaction what others do not see yet', async () => {
    await db.sluice.knex.transaction(async (trx) => {
      await db.sluice.enqueue({ name: 'mail', payload: { to: 'ann' } }, { trx });
      expect(await enqueuedJobs(db.sluice, { name: 'mail' }, { trx })).toHaveLength(1);
      expect(await enqueuedJobs(db.sluice, { name: 'mail' })).toHaveLength(0);
    });
    expect(await enqueuedJobs(db.sluice, { name: 'mail' })).toHaveLength(1);
  });

  it('refuses unknown keys, names that are not strings and a trx that is no transaction', async () => {
    await expect(enqueuedJobs(db.sluice, { args: {} } as never)).rejects.toThrow(
      new OptionsError('args', "is not an option of enqueuedJobs's filter"),
    );
    await expect(enqueuedJobs(db.sluice, {}, { tx: 1 } as never)).rejects.toThrow(
      new OptionsError('tx', 'is not an option of enqueuedJobs (did you mean trx?)'),
    );
    await expect(enqueuedJobs(db.sluice, { name: 3 } as never)).rejects.toThrow(
      'option name must be a non-empty string (got 3)',
    );
    await expect(enqueuedJobs(db.sluice, {}, { trx: db.sluice.knex as never })).rejects.toThrow(
      'option trx must be a knex transaction',
    );
    await expect(enqueuedJobs(db.sluice, {}, { limit: 0 })).rejects.toThrow(OptionsError);
    await expect(assertEnqueued(db.sluice, { name: 'x' }, { cout: 1 } as never)).rejects.toThrow(
      'option cout is not an option of assertEnqueued (did you mean count?)',
    );
  });
});

describe('assertEnqueued and refuteEnqueued', () => {
  it('pass on a match and return the matching jobs', async () => {
    const { id } = await db.sluice.enqueue({ name: 'mail', queue: 'q1', payload: { to: 'ann', n: 1 } });
    const jobs = await assertEnqueued(db.sluice, { name: 'mail', payload: { to: 'ann' } });
    expect(jobs.map((j) => j.id)).toEqual([id]);
    await assertEnqueued(db.sluice, { queue: 'q1' }, { count: 1 });
    await refuteEnqueued(db.sluice, { name: 'mail', payload: { to: 'bob' } });
    await refuteEnqueued(db.sluice, { queue: 'q2' });
  });

  it('fail with the jobs of the name that came closest, how each differs, and a diff for the runner', async () => {
    await db.sluice.enqueueBatch([
      { name: 'mail', queue: 'q1', payload: { to: 'bob', lang: 'en' } },
      { name: 'mail', queue: 'q2', payload: { to: 'cy' } },
    ]);
    const ids = await liveIds();
    const error = await failure(assertEnqueued(db.sluice, { name: 'mail', queue: 'q1', payload: { to: 'ann' } }));
    expect(error.name).toBe('AssertionError');
    expect(error.message).toBe(
      [
        'assertEnqueued: no live job matches {"name":"mail","queue":"q1","payload":{"to":"ann"}}; the live jobs of its name and queue:',
        `  #${ids[0]} mail on q1 {"to":"bob","lang":"en"}: payload.to: expected "ann", got "bob"`,
      ].join('\n'),
    );
    expect(error.actual).toEqual({ name: 'mail', queue: 'q1', payload: { to: 'bob', lang: 'en' } });
    expect(error.expected).toEqual({ name: 'mail', queue: 'q1', payload: { to: 'ann', lang: 'en' } });

    // Closest first (fewest differences), then oldest first.
    const byName = await failure(assertEnqueued(db.sluice, { name: 'mail', payload: { to: 'dee', extra: [1] } }));
    expect(byName.message.split('\n').slice(1)).toEqual([
      `  #${ids[0]} mail on q1 {"to":"bob","lang":"en"}: payload.to: expected "dee", got "bob"; payload.extra: expected [1], missing`,
      `  #${ids[1]} mail on q2 {"to":"cy"}: payload.to: expected "dee", got "cy"; payload.extra: expected [1], missing`,
    ]);
  });

  it('fail with the live jobs at all when none has the name and queue', async () => {
    const { id } = await db.sluice.enqueue({ name: 'report', payload: { day: 1 } });
    const error = await failure(assertEnqueued(db.sluice, { name: 'mail' }));
    expect(error.message).toBe(
      `assertEnqueued: no live job matches {"name":"mail"}; the live jobs at all:\n  #${id} report on default {"day":1}: name: expected "mail", got "report"`,
    );
    await db.sluice.jobs.cancel(id);
    const empty = await failure(assertEnqueued(db.sluice, { name: 'mail' }));
    expect(empty.message).toBe('assertEnqueued: no live job matches {"name":"mail"}; the live jobs at all: none');
  });

  it('count: fail when another number of jobs match, listing them', async () => {
    await db.sluice.enqueueBatch([
      { name: 'mail', payload: { to: 'ann' } },
      { name: 'mail', payload: { to: 'ann' } },
    ]);
    const ids = await liveIds();
    const error = await failure(assertEnqueued(db.sluice, { name: 'mail' }, { count: 1 }));
    expect(error.message).toBe(
      `assertEnqueued: expected 1 live job(s) matching {"name":"mail"}, found 2:\n  #${ids[0]} mail on default {"to":"ann"}\n  #${ids[1]} mail on default {"to":"ann"}`,
    );
    expect([error.actual, error.expected]).toEqual([2, 1]);
    await assertEnqueued(db.sluice, { name: 'mail' }, { count: 2 });
    await assertEnqueued(db.sluice, { name: 'none' }, { count: 0 });
  });

  it('refuteEnqueued fails listing the jobs that match', async () => {
    const { id } = await db.sluice.enqueue({ name: 'mail', queue: 'q1', payload: { to: 'ann' } });
    const error = await failure(refuteEnqueued(db.sluice, { queue: 'q1' }));
    expect(error.message).toBe(
      `refuteEnqueued: expected no live job matching {"queue":"q1"}, found 1:\n  #${id} mail on q1 {"to":"ann"}`,
    );
  });
});
