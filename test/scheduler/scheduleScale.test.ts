import { describe, expect, it } from 'vitest';
import { sqlDue } from '../../src/scheduler/fireSchedules.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * docs/schedules.md "Cost": 100,000 schedules cost the maintenance pass what is due, not what
 * is stored: the due read walks ix_due from its start to now. Measured with MariaDB's ANALYZE
 * (rows the server actually read; MySQL 8 has EXPLAIN ANALYZE instead, not run here).
 */
const db = useTestDatabase('schedule_scale');
const NO_SWEEP = '0 0 1 1 *';

/** 100,000 schedules by SQL (ten rows crossed five times), every one due in a day but `due` of them. */
async function seed(due: number): Promise<void> {
  const digits =
    'SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9';
  await db.query(
    `INSERT INTO sluice_schedules (schedule_key, job_name, queue, every_ms, payload, next_run_at, created_at)
     SELECT CONCAT('s', LPAD(n, 6, '0')), 'scaled', 'default', 86400000, '{}',
            IF(n < ?, NOW(3) - INTERVAL 1 SECOND, NOW(3) + INTERVAL 1 DAY), NOW(3)
     FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
           FROM (${digits}) a, (${digits}) b, (${digits}) c, (${digits}) e, (${digits}) f) seq`,
    [due],
  );
}

describe('100,000 schedules', () => {
  it('the fire reads only the due ones and fires each once', async () => {
    await seed(10);
    const [{ n }] = (await db.query<{ n: number }>('SELECT COUNT(*) AS n FROM sluice_schedules')) as [{ n: number }];
    expect(Number(n)).toBe(100_000);

    const [plan] = await db.query<Record<string, string>>(`ANALYZE FORMAT=JSON ${sqlDue(db.sluice.tables)}`, [500]);
    const json = Object.values(plan ?? {})[0] ?? '';
    expect(json).toMatch(/"key":\s*"ix_due"/);
    const rowsRead = [...json.matchAll(/"r_rows":\s*([\d.]+)/g)].map((m) => Number(m[1]));
    expect(rowsRead.length).toBeGreaterThan(0);
    expect(Math.max(...rowsRead)).toBeLessThanOrEqual(11);

    const maintenance = db.sluice.maintenance({ schedule: NO_SWEEP, jitterMs: 0 });
    try {
      expect((await maintenance.runOnce()).tasks.fireSchedules).toEqual({ fired: 10, advanced: 10 });
      expect((await maintenance.runOnce()).tasks.fireSchedules).toEqual({ fired: 0, advanced: 0 });
    } finally {
      await maintenance.stop();
    }
    const jobs = await db.query("SELECT id FROM sluice_jobs WHERE name = 'scaled'");
    expect(jobs).toHaveLength(10);
  });
});
