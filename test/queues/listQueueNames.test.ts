import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { listQueueNames } from '../../src/queues/listQueueNames.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/** The dashboard's queue list: live, dead-only and paused queues, once each, in name order, up to a bound. */
const db = useTestDatabase('list_queue_names');

describe('listQueueNames', () => {
  it('lists queues with live jobs, dead jobs or a pause row, each once, sorted', async () => {
    for (const queue of ['mail', 'mail', 'billing', 'reports']) await insertJob(db, { queue });
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (90, 'graveyard', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3)), (91, 'mail', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3))`,
    );
    await db.sluice.queues.pause('quiet');
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    expect(await listQueueNames(executor, db.sluice.tables)).toEqual([
      'billing',
      'graveyard',
      'mail',
      'quiet',
      'reports',
    ]);
    expect(await listQueueNames(executor, db.sluice.tables, 2)).toEqual(['billing', 'graveyard']);
  });
});
