import { describe, expect, it } from 'vitest';
import { randomText } from '../helpers/randomText.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A single enqueue with no key, no trace and no transaction of the caller's is one autocommit
 * INSERT: one statement on the wire, announced on knex's 'query' event like every other. A
 * payload stored apart (over 1 KiB) makes it a short transaction of two INSERTs instead.
 */
const db = useTestDatabase('single_enqueue');

/**
 * The first keyword of each statement sent while `fn` runs, transaction control left out, and
 * the wake-up's reads too (the doorbells, the ringer's own identity, the process list): they go on
 * the ringer's own connection, off the enqueue's path, at most once per 100 ms per queue.
 */
const WAKE_UP = /doorbells|@@hostname|processlist/i;

function statementsDuring(fn: () => Promise<unknown>, sluice = db.sluice): Promise<string[]> {
  const sent: string[] = [];
  const listen = (q: { sql: string }) => {
    const keyword =
      q.sql
        .trim()
        .split(/[\s;]+/)[0]
        ?.toUpperCase() ?? '';
    if (!['BEGIN', 'COMMIT'].includes(keyword) && !WAKE_UP.test(q.sql)) sent.push(keyword);
  };
  sluice.knex.on('query', listen);
  return fn()
    .then(() => sent)
    .finally(() => sluice.knex.off('query', listen));
}

describe('a single enqueue', () => {
  it('is one INSERT, and the job is there with its id', async () => {
    await db.sluice.enqueue({ name: 'warm-up' });
    let id = 0;
    const sent = await statementsDuring(async () => {
      ({ id } = await db.sluice.enqueue({ name: 'one', payload: { n: 1 } }));
    });
    expect(sent).toEqual(['INSERT']);
    expect((await db.sluice.jobs.get(id))?.payload).toEqual({ n: 1 });
  });

  it('is one INSERT from the very first one: a small job needs no look-up of the packet limit', async () => {
    const fresh = db.open();
    const sent = await statementsDuring(() => fresh.enqueue({ name: 'first', payload: { n: 1 } }), fresh);
    expect(sent).toEqual(['INSERT']);
  });

  it('with a payload stored apart is one transaction of two INSERTs', async () => {
    // The server's packet limit is read once, by the first job whose statement may need it.
    await db.sluice.enqueue({ name: 'warm-up', payload: { text: randomText(2_000) } });
    const sent = await statementsDuring(() => db.sluice.enqueue({ name: 'big', payload: { text: randomText(2_000) } }));
    expect(sent).toEqual(['INSERT', 'INSERT']);
  });

  it('with a large payload that packs into its row is one INSERT', async () => {
    await db.sluice.enqueue({ name: 'warm-up', payload: { text: randomText(2_000) } });
    const lines = Array.from({ length: 100 }, (_, i) => ({ sku: `SKU-${i % 7}`, qty: i % 3 }));
    const sent = await statementsDuring(() => db.sluice.enqueue({ name: 'big', payload: { lines } }));
    expect(sent).toEqual(['INSERT']);
  });
});
