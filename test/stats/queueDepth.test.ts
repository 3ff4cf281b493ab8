import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { queueDepth } from '../../src/stats/queueDepth.ts';
import { ago, fromNow, insertJob, MINUTE } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * queueDepth (the dashboard's per-queue counts): exact below the cap, "at least" at it, the
 * oldest ready job's age on the DB clock across priorities even past the cap, and every statement
 * a covering read of ix_head without a sort.
 */
const db = useTestDatabase('queue_depth');

describe('queueDepth', () => {
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

    const exact = await queueDepth(executor, tables, 'q', { max: 1_000 });
    expect(exact).toMatchObject({
      ready: { count: 31, exact: true },
      notDue: { count: 5, exact: true },
      running: { count: 3, exact: true },
    });
    expect(exact.oldestReadyMs).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(exact.oldestReadyMs).toBeLessThan(31 * MINUTE);

    const capped = await queueDepth(executor, tables, 'q', { max: 3 });
    expect(capped).toMatchObject({
      ready: { count: 3, exact: false },
      notDue: { count: 3, exact: false },
      running: { count: 3, exact: false },
    });
    // Past the cap the oldest ready job (priority 5, the last range) is still found.
    expect(capped.oldestReadyMs).toBeGreaterThanOrEqual(30 * MINUTE);
    expect(await queueDepth(executor, tables, 'none', { max: 10 })).toEqual({
      ready: { count: 0, exact: true },
      notDue: { count: 0, exact: true },
      running: { count: 0, exact: true },
      oldestReadyMs: null,
    });
  });

  it('reads ix_head only, without a sort', async () => {
    for (let i = 0; i < 50; i++) await insertJob(db, { queue: 'q', priority: i % 2 });
    const statements: string[] = [];
    db.sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
    const { db: executor, tables } = runtimeOf();
    await queueDepth(executor, tables, 'q', { max: 100 });
    db.sluice.knex.removeAllListeners('query');
    const counts = statements.filter((sql) => sql.includes('COUNT(*)'));
    expect(counts.length).toBeGreaterThanOrEqual(3);
    for (const sql of counts) {
      const plan = await db.query<{ key: string | null; Extra: string | null; table: string }>(
        `EXPLAIN ${sql}`,
        sql.includes('lock_id > ') ? ['q', 100] : ['q', 0, 100],
      );
      const inner = plan.filter((row) => row.table === 'sluice_jobs');
      expect(
        inner.map((row) => row.key),
        sql,
      ).toEqual(['ix_head']);
      expect(inner.map((row) => row.Extra ?? '').join(), sql).not.toMatch(/filesort|temporary/);
    }
  });
});

function runtimeOf() {
  return { db: fromKnex(db.sluice.knex, { readCommitted: true }), tables: db.sluice.tables };
}
