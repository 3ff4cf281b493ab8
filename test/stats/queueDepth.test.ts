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

  it('reads indexes only, without a sort, in three statements for many queues', async () => {
    for (let i = 0; i < 50; i++) await insertJob(db, { queue: `q${i % 10}`, priority: Math.floor(i / 10) % 2 });
    const statements: { sql: string; bindings: unknown[] }[] = [];
    const listen = (q: { sql: string; bindings?: unknown[] }) =>
      statements.push({ sql: q.sql, bindings: q.bindings ?? [] });
    db.sluice.knex.on('query', listen);
    const { db: executor, tables } = runtimeOf();
    const depths = await queueDepths(
      executor,
      tables,
      Array.from({ length: 10 }, (_, i) => `q${i}`),
      { max: 100 },
    );
    db.sluice.knex.off('query', listen);
    expect(depths.get('q3')?.ready).toEqual({ count: 5, exact: true });
    // Each queue's lowest and highest priority, then all priorities of those with several, then
    // every count at once (10 queues × (2 priorities × 2 + running + dead) ranges).
    expect(statements).toHaveLength(3);
    for (const { sql, bindings } of statements) {
      const plan = await db.query<{ key: string | null; Extra: string | null; table: string }>(
        `EXPLAIN ${sql}`,
        bindings,
      );
      const reads = plan.filter((row) => row.table === 'j' || row.table === 'sluice_jobs');
      expect(reads.length, sql).toBeGreaterThan(0);
      for (const row of reads) expect(['ix_head', 'ix_queue_failed'], sql).toContain(row.key);
      for (const row of plan) expect(row.Extra ?? '', sql).not.toMatch(/filesort|temporary/);
    }
  });
});

function runtimeOf() {
  return { db: fromKnex(db.sluice.knex, { readCommitted: true }), tables: db.sluice.tables };
}
