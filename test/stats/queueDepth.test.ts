import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { type QueueDepth, queueDepths } from '../../src/stats/queueDepth.ts';
import { ago, fromNow, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * queueDepths (the dashboard's per-queue counts): exact below the cap, "at least" at it, the
 * oldest ready job's age on the DB clock across priorities even past the cap, dead jobs not
 * re-driven, and every statement an index read without a sort.
 */
const db = useTestDatabase('queue_depth');

describe('queueDepths', () => {
  it('counts ready, not-yet-due and running jobs exactly below the cap and as "at least" at it', async () => {
    for (const priority of [0, 1, 2]) {
      for (let i = 0; i < 10; i++) await insertJob(db, { queue: 'q', priority, runAt: ago(MINUTE) });
    }
    await insertJob(db, { queue: 'q', priority: 5, runAt: ago(30 * MINUTE) });
    for (let i = 0; i < 4; i++) await insertJob(db, { queue: 'q', priority: 1, runAt: fromNow(MINUTE) });
    await insertJob(db, { queue: 'q', runAt: fromNow(MINUTE), retryTimes: 2 });
    for (let i = 0; i < 3; i++) await insertJob(db, { queue: 'q', lockId: `h-1~t.${i}` });
    await insertJob(db, { queue: 'other' });
    const { db: executor, tables } = runtimeOf();

    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at, redriven_at)
       VALUES (90, 'q', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3), NULL), (91, 'q', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3), NOW(3))`,
    );
    const depth = async (queue: string, max: number) =>
      (await queueDepths(executor, tables, [queue], { max })).get(queue) as QueueDepth;

    const exact = await depth('q', 1_000);
    expect(exact).toMatchObject({
      ready: { count: 31, exact: true },
      notDue: { count: 5, exact: true },
      running: { count: 3, exact: true },
      dead: { count: 1, exact: true },
    });
    expect(exact.oldestReadyMs).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(exact.oldestReadyMs).toBeLessThan(31 * MINUTE);

    const capped = await depth('q', 3);
    expect(capped).toMatchObject({
      ready: { count: 3, exact: false },
      notDue: { exact: false },
      running: { count: 3, exact: false },
    });
    // Its four priorities share the cap: each range is read for at least one entry.
    expect(capped.notDue.count).toBeGreaterThanOrEqual(1);
    expect(capped.notDue.count).toBeLessThanOrEqual(3);
    // Past the cap the oldest ready job (priority 5, the last range) is still found.
    expect(capped.oldestReadyMs).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(await depth('none', 10)).toEqual({
      ready: { count: 0, exact: true },
      notDue: { count: 0, exact: true },
      held: { count: 0, exact: true },
      running: { count: 0, exact: true },
      dead: { count: 0, exact: true },
      oldestReadyMs: null,
    });
  });

  it('reads indexes only: one statement for small queues, four when every queue holds more than max', async () => {
    for (let i = 0; i < 50; i++) await insertJob(db, { queue: `q${i % 10}`, priority: Math.floor(i / 10) % 2 });
    const names = Array.from({ length: 10 }, (_, i) => `q${i}`);
    const { db: executor, tables } = runtimeOf();
    // Each queue holds 5 jobs. Under max, they are counted whole, one grouped read each.
    const whole = await statementsAndPlans(() => queueDepths(executor, tables, names, { max: 100 }));
    expect(whole.value.get('q3')?.ready).toEqual({ count: 5, exact: true });
    expect(whole.statements).toHaveLength(1);
    // Over max: the same statement finds none small; then each queue's lowest and highest priority
    // (two dives each), all priorities of those with several, and every count at once (10 queues × (2 priorities ×
    // 3 + running) ranges; the dead ones were small).
    const ranged = await statementsAndPlans(() => queueDepths(executor, tables, names, { max: 4 }));
    expect(ranged.value.get('q3')?.ready).toEqual({ count: 4, exact: false });
    expect(ranged.value.get('q3')?.dead).toEqual({ count: 0, exact: true });
    expect(ranged.statements).toHaveLength(4);
    for (const { sql, bindings } of [...whole.statements, ...ranged.statements]) {
      const plan = await db.query<{ key: string | null; Extra: string | null; table: string }>(
        `EXPLAIN ${sql}`,
        bindings,
      );
      const reads = plan.filter((row) => !(row.table ?? '').startsWith('<') && row.table !== null);
      // A MIN()/MAX() over a constant prefix is answered by a dive before the plan: no table left.
      const dives = plan.every((row) => row.table === null && /optimized away/.test(row.Extra ?? ''));
      expect(reads.length > 0 || dives, sql).toBe(true);
      for (const row of reads) expect(['ix_head', 'ix_queue_failed'], sql).toContain(row.key);
      // A sort or a temporary table only over the derived table of names, never over index entries.
      for (const row of reads) expect(row.Extra ?? '', sql).not.toMatch(/filesort|temporary/);
    }
  });

  it("reads a deep queue's counts up to max, whatever lies around it", async () => {
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
       SELECT 'deep', 'n', '{}', NOW(3) - INTERVAL 1 MINUTE, NOW(3) FROM seq_1_to_20000
       UNION ALL SELECT CONCAT('shallow-', seq), 'n', '{}', NOW(3), NOW(3) FROM seq_1_to_10000`,
    );
    // Statistics as an install of many small queues has them: few jobs per queue on average.
    await db.query('ANALYZE TABLE sluice_jobs');
    await db.sluice.knex.transaction(async (trx) => {
      const rowsRead = async () => {
        const [rows] = (await trx.raw("SHOW SESSION STATUS LIKE 'Handler_read%'")) as [{ Value: string }[]];
        return rows.reduce((sum, r) => sum + Number(r.Value), 0);
      };
      const before = await rowsRead();
      const depths = await queueDepths(
        fromKnex(trx, { readCommitted: true }),
        db.sluice.tables,
        ['deep', 'shallow-1', 'shallow-3'],
        { max: 500 },
      );
      const read = (await rowsRead()) - before;
      expect(depths.get('deep')?.ready).toEqual({ count: 500, exact: false });
      expect(depths.get('shallow-3')?.ready).toEqual({ count: 1, exact: true });
      // The deep queue's entries up to max for the test that finds it deep, up to max for its
      // count: never its 20,000 (its free priorities were a range read of every one).
      expect(read).toBeLessThan(3_000);
    });
  });
});

/** What `fn` returns, with each statement it sent through the pool (and its bindings). */
async function statementsAndPlans<T>(fn: () => Promise<T>) {
  const statements: { sql: string; bindings: unknown[] }[] = [];
  const listen = (q: { sql: string; bindings?: unknown[] }) =>
    statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
  db.sluice.knex.on('query', listen);
  try {
    return { value: await fn(), statements };
  } finally {
    db.sluice.knex.off('query', listen);
  }
}

function runtimeOf() {
  return { db: fromKnex(db.sluice.knex, { readCommitted: true }), tables: db.sluice.tables };
}
