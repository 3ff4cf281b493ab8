import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Single enqueues in flight together in one process, outside a caller's transaction, share one
 * commit (EnqueueCoalescer): one multi-row INSERT for all of them, each caller its own id, and a
 * job the server refuses fails alone, the others written. A lone call stays one INSERT
 * (singleEnqueue.test.ts); inside a caller's transaction each call is its own INSERT as before.
 */
const db = useTestDatabase('coalesced_enqueue');

/** The statements sent while `fn` runs (knex's 'query' event; the wake-ups' own reads left out). */
async function statementsDuring(fn: () => Promise<unknown>, sluice = db.sluice): Promise<string[]> {
  const sent: string[] = [];
  const listen = (q: { sql: string }) => {
    if (!/doorbells|@@hostname|processlist/i.test(q.sql)) sent.push(q.sql.trim());
  };
  sluice.knex.on('query', listen);
  try {
    await fn();
  } finally {
    sluice.knex.off('query', listen);
  }
  return sent;
}

const keyword = (sql: string) => sql.split(/[\s;]+/)[0]?.toUpperCase() ?? '';

describe('single enqueues in flight together', () => {
  it('go out as one multi-row INSERT, each caller with the id of its own job', async () => {
    // The first shared commit reads the server's flavour and packet limit, once per install.
    await Promise.all([db.sluice.enqueue({ name: 'warm-up' }), db.sluice.enqueue({ name: 'warm-up' })]);
    const calls = 200;
    let results: { id: number; duplicate: boolean }[] = [];
    const sent = await statementsDuring(async () => {
      results = await Promise.all(
        Array.from({ length: calls }, (_, n) =>
          db.sluice.enqueue({ name: 'many', queue: n % 2 === 0 ? 'even' : 'odd', payload: { n } }),
        ),
      );
    });
    expect(sent.map(keyword)).toEqual(['INSERT']);
    expect(sent[0]).toMatch(/RETURNING id$/);
    expect(new Set(results.map((r) => r.id)).size).toBe(calls);
    expect(results.every((r) => r.duplicate === false)).toBe(true);
    const rows = await db.query<{ id: number; queue: string; payload: string }>(
      "SELECT id, queue, payload FROM sluice_jobs WHERE name = 'many'",
    );
    expect(rows).toHaveLength(calls);
    const byId = new Map(rows.map((r) => [Number(r.id), r]));
    for (const [n, { id }] of results.entries()) {
      expect(JSON.parse(byId.get(id)?.payload ?? 'null'), `job ${n}`).toEqual({ n });
      expect(byId.get(id)?.queue).toBe(n % 2 === 0 ? 'even' : 'odd');
    }
  });

  it('a call that comes while a commit is under way waits for it and goes in the next one', async () => {
    await db.sluice.enqueue({ name: 'warm-up' });
    const sent = await statementsDuring(async () => {
      const first = db.sluice.enqueue({ name: 'first' });
      // The first commit is under way (a microtask later): these form the next one.
      await Promise.resolve();
      await Promise.resolve();
      const later = Array.from({ length: 20 }, (_, n) => db.sluice.enqueue({ name: 'later', payload: { n } }));
      await Promise.all([first, ...later]);
    });
    expect(sent.map(keyword)).toEqual(['INSERT', 'INSERT']);
    expect(sent[0]).not.toMatch(/RETURNING/);
    expect(sent[1]).toMatch(/RETURNING id$/);
    expect(await db.query("SELECT id FROM sluice_jobs WHERE name = 'later'")).toHaveLength(20);
  });

  it('a job the server refuses fails alone; the others are written, each with its id', async () => {
    await db.sluice.enqueue({ name: 'warm-up' });
    await db.query('DROP TRIGGER IF EXISTS sluice_refuse_one');
    await db.query(`
      CREATE TRIGGER sluice_refuse_one BEFORE INSERT ON sluice_jobs FOR EACH ROW
      BEGIN
        IF NEW.name = 'refused' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused by a trigger'; END IF;
      END`);
    try {
      let settled: PromiseSettledResult<{ id: number }>[] = [];
      const sent = await statementsDuring(async () => {
        settled = await Promise.allSettled(
          Array.from({ length: 10 }, (_, n) =>
            db.sluice.enqueue({ name: n === 4 ? 'refused' : 'accepted', payload: { n } }),
          ),
        );
      });
      // The shared INSERT, refused whole; then each job alone.
      expect(sent.map(keyword)).toEqual(Array.from({ length: 11 }, () => 'INSERT'));
      expect(settled.map((s) => s.status)).toEqual(settled.map((_, n) => (n === 4 ? 'rejected' : 'fulfilled')));
      expect(String((settled[4] as PromiseRejectedResult).reason)).toMatch(/refused by a trigger/);
      const rows = await db.query<{ id: number; payload: string }>(
        "SELECT id, payload FROM sluice_jobs WHERE name = 'accepted' ORDER BY id",
      );
      expect(rows.map((r) => JSON.parse(r.payload).n)).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
      const ids = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.id] : []));
      expect(rows.map((r) => Number(r.id))).toEqual(ids);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS sluice_refuse_one');
    }
  });

  it('a job with an idempotency key is written alone, beside the shared INSERT', async () => {
    await db.sluice.enqueue({ name: 'warm-up', idempotencyKey: 'k0' });
    const results = await Promise.all([
      db.sluice.enqueue({ name: 'plain', payload: { n: 1 } }),
      db.sluice.enqueue({ name: 'plain', payload: { n: 2 } }),
      db.sluice.enqueue({ name: 'keyed', idempotencyKey: 'k0' }),
      db.sluice.enqueue({ name: 'keyed', idempotencyKey: 'k1' }),
    ]);
    expect(results.map((r) => r.duplicate)).toEqual([false, false, true, false]);
    expect(await db.query("SELECT id FROM sluice_jobs WHERE name IN ('plain', 'keyed')")).toHaveLength(3);
  });

  it("inside a caller's transaction each call is its own INSERT, as before", async () => {
    await db.sluice.enqueue({ name: 'warm-up' });
    const sent = await statementsDuring(() =>
      db.sluice.knex.transaction((trx) =>
        Promise.all(
          Array.from({ length: 5 }, (_, n) => db.sluice.enqueue({ name: 'in-trx', payload: { n } }, { trx })),
        ),
      ),
    );
    expect(sent.map(keyword).filter((k) => k === 'INSERT')).toHaveLength(5);
    expect(sent.some((s) => /RETURNING/.test(s))).toBe(false);
  });
});
