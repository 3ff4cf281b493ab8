import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { listQueueNames } from '../../src/queues/listQueueNames.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The one enumeration of queues: live, dead-only and paused queues, once each, in name order, up to
 * a bound, from a name on; the live ones alone, or those holding a claim; one statement per table.
 */
const db = useTestDatabase('list_queue_names');

describe('listQueueNames', () => {
  it('lists queues with live jobs, dead jobs or a pause row, each once, sorted', async () => {
    for (const queue of ['mail', 'mail', 'billing', 'reports']) await insertJob(db, { queue });
    await db.query(
      `INSERT INTO sluice_dead_jobs (id, queue, name, payload, priority, retry_times, last_error, created_at, failed_at)
       VALUES (90, 'graveyard', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3)), (91, 'mail', 'n', '{}', 0, 3, 'x', NOW(3), NOW(3))`,
    );
    await db.sluice.pauseQueue('quiet');
    await insertJob(db, { queue: 'reports', lockId: 'h-1~t.0' });
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    const names = async (options?: Parameters<typeof listQueueNames>[2]) =>
      (await listQueueNames(executor, db.sluice.tables, options)).map((q) => q.name);
    expect(await names()).toEqual(['billing', 'graveyard', 'mail', 'quiet', 'reports']);
    expect(await names({ limit: 2 })).toEqual(['billing', 'graveyard']);
    expect(await names({ after: 'graveyard', limit: 2 })).toEqual(['mail', 'quiet']);
    expect(await names({ of: 'live' })).toEqual(['billing', 'mail', 'reports']);
    expect(await listQueueNames(executor, db.sluice.tables, { of: 'claimed' })).toEqual([
      { name: 'reports', claimed: true },
    ]);
    expect((await listQueueNames(executor, db.sluice.tables)).filter((q) => q.claimed)).toEqual([
      { name: 'reports', claimed: true },
    ]);
  });

  it('reads a page of names in one statement per table, however many queues', async () => {
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
       SELECT CONCAT('q', LPAD(seq, 4, '0')), 'n', '{}', NOW(3), NOW(3) FROM seq_1_to_3000`,
    );
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    let statements = 0;
    const count = () => statements++;
    db.sluice.knex.on('query', count);
    const page = await listQueueNames(executor, db.sluice.tables, { after: 'q1000', limit: 500 });
    db.sluice.knex.off('query', count);
    expect(page).toHaveLength(500);
    expect(page[0]?.name).toBe('q1001');
    expect(statements).toBe(3);
  });
});
