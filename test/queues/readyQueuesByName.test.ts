import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { readyQueuesByName } from '../../src/queues/readyQueues.ts';
import { statementsOf } from '../helpers/statementsOf.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * A wide worker's scan of its named queues: every one with free jobs found, its priorities and
 * whether one is due, in one statement per thousand names (a round trip each, not one per hundred).
 */
const db = useTestDatabase('ready_queues_by_name');

describe('readyQueuesByName', () => {
  it('finds the queues with free jobs among 1,050 names in two statements', async () => {
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, priority, run_at, created_at)
       SELECT CONCAT('t-', LPAD(seq, 4, '0')), 'n', '{}', seq % 2, NOW(3) - INTERVAL 1 SECOND, NOW(3)
       FROM seq_0_to_1049 WHERE seq % 3 = 0
       UNION ALL SELECT 't-0003', 'n', '{}', 5, NOW(3) + INTERVAL 1 HOUR, NOW(3)
       UNION ALL SELECT 'other', 'n', '{}', 0, NOW(3), NOW(3)`,
    );
    const names = Array.from({ length: 1_050 }, (_, i) => `t-${String(i).padStart(4, '0')}`);
    const { n, value } = await statementsOf(db.sluice, () =>
      readyQueuesByName(fromKnex(db.sluice.knex, { readCommitted: true }), db.sluice.tables, names, 1_000),
    );
    expect(n).toBe(2);
    expect(value.map((q) => q.queue)).toEqual(names.filter((_, i) => i % 3 === 0));
    const q3 = value.find((q) => q.queue === 't-0003');
    expect(q3?.priorities).toEqual([1, 5]);
    expect(q3?.dueInMs).toBeLessThanOrEqual(0);
  });
});
