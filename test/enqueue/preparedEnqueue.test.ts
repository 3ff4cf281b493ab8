import { describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A single enqueue on sluice's own pool is a prepared INSERT (singleJobInsert, executePrepared):
 * its values travel apart from its text. It must write the very row the text INSERT (the one a
 * caller's transaction gets) writes, be prepared once per connection, and still land when the
 * server has no prepared statement left to give.
 */
const db = useTestDatabase('prepared_enqueue');

const SPECS: JobSpec[] = [
  { name: 'plain' },
  { name: 'mail.send:v2', queue: 'q-1', payload: { to: "o'brien@example.com", note: 'h\u00e9 "quoted" \\ 🎉' } },
  { name: 'urgent', priority: -32768, payload: [1, 2.5, null, true] },
  { name: 'low', priority: 32767, payload: 'just a string' },
  { name: 'at', runAt: new Date('2031-02-03T04:05:06.789Z') },
  { name: 'retries', maxRetries: 7, backoff: { type: 'fixed', delayMs: 250 } },
  { name: 'delayed', delayMs: 90_000, maxRetries: 0 },
];

interface Row {
  id: number;
  queue: string;
  name: string;
  payload: string;
  priority: number;
  run_at: string;
  lead_ms: number;
  max_retries: number | null;
  backoff: string | null;
}

async function rowOf(id: number): Promise<Omit<Row, 'id' | 'lead_ms'>> {
  const [row] = await db.query<Row>(
    `SELECT id, queue, name, payload, priority, DATE_FORMAT(run_at, '%Y-%m-%d %H:%i:%s.%f') AS run_at,
            TIMESTAMPDIFF(MICROSECOND, created_at, run_at) DIV 1000 AS lead_ms, max_retries, backoff
     FROM sluice_jobs WHERE id = ?`,
    [id],
  );
  if (!row) throw new Error(`job ${id} is missing`);
  const { id: _, lead_ms, run_at, ...rest } = row;
  // A time on the DB clock is compared by its lead over created_at, in whole seconds.
  return { ...rest, run_at: run_at > '2030' ? run_at : `+${Math.round(Number(lead_ms) / 1000)} s` };
}

async function sessionStatus(sluice: typeof db.sluice, name: string): Promise<number> {
  const [rows] = (await sluice.knex.raw(`SHOW SESSION STATUS LIKE '${name}'`)) as [{ Value: string }[]];
  return Number(rows[0]?.Value);
}

describe('a single enqueue, prepared', () => {
  it('writes the same row as the INSERT sent as text in a caller’s transaction', async () => {
    for (const spec of SPECS) {
      const prepared = await db.sluice.enqueue(spec);
      const text = await db.sluice.knex.transaction((trx) => db.sluice.enqueue(spec, { trx }));
      expect(await rowOf(prepared.id), spec.name).toEqual(await rowOf(text.id));
    }
    const [at] = await db.query<{ run_at: string }>(
      "SELECT DATE_FORMAT(run_at, '%Y-%m-%d %H:%i:%s.%f') AS run_at FROM sluice_jobs WHERE name = 'at' LIMIT 1",
    );
    expect(at?.run_at).toBe('2031-02-03 04:05:06.789000');
    const delayed = await db.query<{ lead_s: number }>(
      "SELECT TIMESTAMPDIFF(SECOND, created_at, run_at) AS lead_s FROM sluice_jobs WHERE name = 'delayed'",
    );
    expect(delayed.map((r) => Number(r.lead_s))).toEqual([90, 90]);
  });

  it('is prepared once on its connection and executed for every job', async () => {
    // A pool of one: the lane's connection is the one the status is read on.
    const sluice = db.open({ poolMax: 1 });
    for (let n = 0; n < 25; n++) await sluice.enqueue({ name: 'counted', payload: { n } });
    expect(await sessionStatus(sluice, 'Com_stmt_prepare')).toBe(1);
    expect(await sessionStatus(sluice, 'Com_stmt_execute')).toBe(25);
  });

  it('lands as text when the server has no prepared statement left to give', async () => {
    const [before] = await db.query<{ n: number }>('SELECT @@GLOBAL.max_prepared_stmt_count AS n');
    await db.query('SET GLOBAL max_prepared_stmt_count = 0');
    try {
      const sluice = db.open({ poolMax: 1 });
      const ids = [];
      for (let n = 0; n < 5; n++) ids.push((await sluice.enqueue({ name: 'unprepared', payload: { n } })).id);
      expect(await sessionStatus(sluice, 'Com_stmt_execute')).toBe(0);
      const rows = await db.query<{ id: number; payload: string }>(
        "SELECT id, payload FROM sluice_jobs WHERE name = 'unprepared' ORDER BY id",
      );
      expect(rows.map((r) => [Number(r.id), JSON.parse(r.payload)])).toEqual(ids.map((id, n) => [id, { n }]));
    } finally {
      await db.query(`SET GLOBAL max_prepared_stmt_count = ${Number(before?.n ?? 16382)}`);
    }
  });
});
