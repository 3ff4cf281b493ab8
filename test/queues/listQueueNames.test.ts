import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import type { Sluice } from '../../src/index.ts';
import { listQueueNames } from '../../src/queues/listQueueNames.ts';
import { WALK_ENTRIES, WALK_STATEMENTS, walkQueueNames } from '../../src/queues/walkQueueNames.ts';
import { insertJob } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The one enumeration of queues: live, dead-only and paused queues, once each, in name order, up to
 * a bound, from a name on, and where the next page starts; the live ones alone, or those holding a
 * claim; one statement per table when the server lists by a loose index scan, else a bounded walk.
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
      (await listQueueNames(executor, db.sluice.tables, options)).names.map((q) => q.name);
    expect(await names()).toEqual(['billing', 'graveyard', 'mail', 'quiet', 'reports']);
    expect(await names({ limit: 2 })).toEqual(['billing', 'graveyard']);
    expect(await names({ after: 'graveyard', limit: 2 })).toEqual(['mail', 'quiet']);
    expect(await names({ of: 'live' })).toEqual(['billing', 'mail', 'reports']);
    expect(await listQueueNames(executor, db.sluice.tables, { of: 'claimed' })).toEqual({
      names: [{ name: 'reports', claimed: true }],
      next: null,
    });
    expect((await listQueueNames(executor, db.sluice.tables)).names.filter((q) => q.claimed)).toEqual([
      { name: 'reports', claimed: true },
    ]);
    // Where the next page starts: after a full page's last name; nowhere after the last queue.
    expect((await listQueueNames(executor, db.sluice.tables, { limit: 2 })).next).toBe('graveyard');
    expect((await listQueueNames(executor, db.sluice.tables, { after: 'mail' })).next).toBeNull();
    expect(await db.sluice.queues.list({ max: 2, after: 'billing' })).toEqual({
      queues: ['graveyard', 'mail'],
      next: 'mail',
    });
  });

  it('reads a page of names in a few statements, however many queues', async () => {
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
    expect(page.names).toHaveLength(500);
    expect(page.names[0]?.name).toBe('q1001');
    expect(page.next).toBe('q1500');
    // EXPLAIN, the live table's listing (or its walk), the dead jobs', the queues table's.
    expect(statements).toBeLessThanOrEqual(3 + WALK_STATEMENTS);
  });

  it('a deep queue among many small ones costs a bounded read, whatever plan the server picks', async () => {
    // A queue of 30,000 jobs first in name order, then 20,000 queues of one job: statistics that
    // say queues are small, and MariaDB 10.11 answers GROUP BY … LIMIT by a range scan that reads
    // every job of the deep queue.
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
       SELECT 'a-deep', 'n', '{}', NOW(3), NOW(3) FROM seq_1_to_30000`,
    );
    await db.query(
      `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
       SELECT CONCAT('t-', LPAD(seq, 5, '0')), 'n', '{}', NOW(3), NOW(3) FROM seq_1_to_20000`,
    );
    await db.query(`UPDATE sluice_jobs SET lock_id = 'k.1' WHERE queue = 'a-deep' ORDER BY id DESC LIMIT 1`);
    await db.query('ANALYZE TABLE sluice_jobs');
    const single = db.open({ poolMax: 1 });
    try {
      const executor = fromKnex(single.knex, { readCommitted: true });
      const before = await rowsRead(single);
      const page = await listQueueNames(executor, single.tables, { of: 'live', limit: 200 });
      const read = (await rowsRead(single)) - before;
      expect(page.names[0]).toEqual({ name: 'a-deep', claimed: true });
      expect(page.names.slice(1).every((q) => q.name.startsWith('t-') && !q.claimed)).toBe(true);
      // Every read walks at most WALK_ENTRIES entries (the server counts each about four times as
      // it groups them), never the deep queue's 30,000.
      expect(read).toBeLessThan(Math.min(30_000, WALK_STATEMENTS * WALK_ENTRIES * 4));
      // The pages of the whole table, one after another, hold every queue once.
      let after: string | null = '';
      const all: string[] = [];
      while (after !== null) {
        const next = await listQueueNames(executor, single.tables, { of: 'live', after, limit: 5_000 });
        all.push(...next.names.map((q) => q.name));
        after = next.next;
      }
      expect(all).toHaveLength(20_001);
      expect(new Set(all).size).toBe(20_001);
    } finally {
      await single.close();
    }
  });

  it('a walk steps over a queue deeper than one read, and stops at its budget saying where', async () => {
    // Queues deeper than a read: each costs a read and a dive, so a walk of WALK_STATEMENTS
    // statements reaches half as many, and says where the next page starts.
    for (const queue of ['d1', 'd2', 'd3'])
      await db.query(
        `INSERT INTO sluice_jobs (queue, name, payload, run_at, created_at)
         SELECT ?, 'n', '{}', NOW(3), NOW(3) FROM seq_1_to_${2 * WALK_ENTRIES}`,
        [queue],
      );
    await insertJob(db, { queue: 'e1' });
    const executor = fromKnex(db.sluice.knex, { readCommitted: true });
    const first = await walkQueueNames(executor, db.sluice.tables, '', 200);
    expect(first.queues.map((q) => q.name)).toEqual(['d1', 'd2'].slice(0, WALK_STATEMENTS / 2));
    expect(first.next).toBe('d2');
    const second = await walkQueueNames(executor, db.sluice.tables, first.next as string, 200);
    expect(second.queues.map((q) => q.name)).toEqual(['d3', 'e1']);
    expect(second.next).toBeNull();
  });
});

/** The session's index and table reads so far (every Handler_read_* counter summed). */
async function rowsRead(sluice: Sluice): Promise<number> {
  const [rows] = (await sluice.knex.raw("SHOW SESSION STATUS LIKE 'Handler_read%'")) as [{ Value: string }[]];
  return rows.reduce((sum, r) => sum + Number(r.Value), 0);
}
