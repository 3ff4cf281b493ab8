import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { finishedPerQueue } from '../../src/history/finishedPerQueue.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** The overview's "finished, 5 min" column: per queue, within the window (DB clock), capped reads say so. */
const db = useTestDatabase('finished_per_queue');

describe('finishedPerQueue', () => {
  it('counts each queue’s finished jobs within the window, newest first under a cap', async () => {
    for (const [id, queue, ago] of [
      [1, 'mail', 10],
      [2, 'mail', 20],
      [3, 'billing', 30],
      [4, 'mail', 400],
    ] as const) {
      await db.query(
        `INSERT INTO sluice_job_history (job_id, queue, name, payload, retry_times, created_at, finished_at)
         VALUES (?, ?, 'n', '{}', 0, NOW(3) - INTERVAL 1 DAY, NOW(3) - INTERVAL ? SECOND)`,
        [id, queue, ago],
      );
    }
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    const all = await finishedPerQueue(executor, db.sluice.tables, { windowSeconds: 300 });
    expect(Object.fromEntries(all.counts)).toEqual({ mail: 2, billing: 1 });
    expect(all.capped).toBe(false);
    const capped = await finishedPerQueue(executor, db.sluice.tables, { windowSeconds: 300, maxRows: 2 });
    expect(Object.fromEntries(capped.counts)).toEqual({ mail: 2 });
    expect(capped.capped).toBe(true);
  });
});
