import { describe, expect, it } from 'vitest';
import type { Sluice } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * `queues.limits()` counts each limited queue's running jobs over the claimed range of ix_head
 * alone: rows read follow the claimed jobs, not the queues' backlogs. Before, a subquery per queue
 * row sought ix_head on the queue alone and read every job of it: 20 fair queues of 1,000 waiting
 * jobs each cost 20,000 rows to count 20 running (the shape bench's scrape: 105,300 of its 107,802).
 */
const db = useTestDatabase('limits_rows_read');
const QUEUES = 20;
const WAITING = 1_000;

/** The session's index and table reads so far (every Handler_read_* counter summed). */
async function rowsRead(sluice: Sluice): Promise<number> {
  const [rows] = (await sluice.knex.raw("SHOW SESSION STATUS LIKE 'Handler_read%'")) as [{ Value: string }[]];
  return rows.reduce((sum, r) => sum + Number(r.Value), 0);
}

describe('queues.limits() rows read', () => {
  it("reads the claimed jobs, not the queues' waiting backlogs", async () => {
    const names = Array.from({ length: QUEUES }, (_, i) => `fair-${String(i).padStart(2, '0')}`);
    for (const queue of names) await db.sluice.queues.setLimits(queue, { concurrency: 5, groupConcurrency: 2 });
    // WAITING free jobs in each queue, and one claimed.
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('fair-', LPAD(s.seq % ${QUEUES}, 2, '0')), 'w', '{}', 0, NOW(3), NOW(3)
       FROM seq_1_to_${QUEUES * WAITING} s`,
    );
    await db.query(
      `UPDATE sluice_jobs j
       JOIN (SELECT MIN(id) AS id FROM sluice_jobs GROUP BY queue) f ON f.id = j.id
       SET j.lock_id = 'k.1', j.locked_at = NOW(3)`,
    );
    await db.query('ANALYZE TABLE sluice_jobs, sluice_queues');
    // One connection: the session's counters are the read's.
    const single = db.open({ poolMax: 1 });
    try {
      const before = await rowsRead(single);
      const all = await single.queues.limits();
      const read = (await rowsRead(single)) - before;
      expect(all.map((l) => [l.queue, l.running])).toEqual(names.map((q) => [q, 1]));
      const beforeOf = await rowsRead(single);
      const some = await single.queues.limits({ queues: names.slice(0, 5) });
      const readOf = (await rowsRead(single)) - beforeOf;
      expect(some.map((l) => l.running)).toEqual([1, 1, 1, 1, 1]);
      // The queues rows, a seek and a claimed entry per queue, the SHOW itself: not 20,000.
      expect(read).toBeLessThan(500);
      expect(readOf).toBeLessThan(200);
    } finally {
      await single.close();
    }
  });
});
