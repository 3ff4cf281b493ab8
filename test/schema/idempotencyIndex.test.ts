import { describe, expect, it } from 'vitest';
import * as replaceIndex from '../../migrations/202611240500_replace_jobs_ux_idempotency.ts';
import * as dropIndex from '../../migrations/202611250100_drop_jobs_ix_idempotency.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Migration 202611240500: the jobs table has no unique index naming the queue any more (on Galera
 * a unique key's value is in every write set, NULL key or not, so every write to one queue from
 * two nodes conflicted); 202611250100 drops the plain (key, queue) index that replaced it (every
 * job paid for it). Idempotency stays race-free through the keys table's primary key
 * (test/idempotency, test/enqueue/concurrentEnqueue.test.ts, and across three nodes in
 * test/galera/galeraQueue.test.ts).
 */
const db = useTestDatabase('idempotency_index');

async function jobIndexes(): Promise<{ name: string; unique: boolean; columns: string }[]> {
  const rows = await db.query<{ name: string; non_unique: number; columns: string }>(
    `SELECT index_name AS name, MIN(non_unique) AS non_unique, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS columns
     FROM information_schema.statistics
     WHERE table_schema = DATABASE() AND table_name = 'sluice_jobs'
     GROUP BY index_name ORDER BY index_name`,
  );
  return rows.map((r) => ({ name: r.name, unique: Number(r.non_unique) === 0, columns: r.columns }));
}

describe('the jobs table: no unique index but the primary key', () => {
  it('has only the primary key unique, and no index on the key (the link reads by primary key)', async () => {
    expect(await jobIndexes()).toEqual([
      { name: 'ix_batch', unique: false, columns: 'batch_id' },
      { name: 'ix_head', unique: false, columns: 'queue,lock_id,priority,run_at' },
      { name: 'PRIMARY', unique: true, columns: 'id' },
    ]);
  });

  it('upgrades a table that has the unique index, keeps its rows, and is re-runnable', async () => {
    const knex = db.sluice.knex;
    const tables = db.sluice.tables;
    await dropIndex.down(knex, tables);
    await replaceIndex.down(knex, tables);
    expect((await jobIndexes()).find((i) => i.name === 'ux_idempotency')).toEqual({
      name: 'ux_idempotency',
      unique: true,
      columns: 'queue,idempotency_key',
    });
    const { id } = await db.sluice.enqueue({ name: 'work', idempotencyKey: 'k-1' });
    await replaceIndex.up(knex, tables);
    await replaceIndex.up(knex, tables);
    expect((await jobIndexes()).map((i) => i.name)).toEqual(['ix_batch', 'ix_head', 'ix_idempotency', 'PRIMARY']);
    await dropIndex.up(knex, tables);
    await dropIndex.up(knex, tables);
    expect((await jobIndexes()).map((i) => i.name)).toEqual(['ix_batch', 'ix_head', 'PRIMARY']);
    expect(await db.query('SELECT id, idempotency_key FROM sluice_jobs')).toEqual([{ id, idempotency_key: 'k-1' }]);
    // The key still refuses a duplicate, now through the keys table alone.
    expect(await db.sluice.enqueue({ name: 'work', idempotencyKey: 'k-1' })).toEqual({ id, duplicate: true });
  });
});
