import { describe, expect, it } from 'vitest';
import * as queuesPromise from '../../migrations/202611260400_add_queues_promise.ts';
import * as queueDepths from '../../migrations/202611260401_create_queue_depths.ts';
import * as workersMetrics from '../../migrations/202611260402_add_workers_metrics.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Migrations 202611260400–02: a queue's promise and its state on the queues row, the table of
 * queue readings, the worker registry's metrics column. Each is re-runnable (MySQL commits DDL as
 * it goes: a migration stopped half-way is run again), and rows written before survive it.
 */
const db = useTestDatabase('observability_columns');

async function columns(table: string): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
    [table],
  );
  return rows.map((r) => r.name);
}

describe('the observability migrations', () => {
  it('go down and up again, twice over, keeping the rows of the tables they alter', async () => {
    const { knex, tables } = db.sluice;
    await db.sluice.queues.pause('kept');
    for (const m of [workersMetrics, queueDepths, queuesPromise]) await m.down(knex, tables);
    expect(await columns('sluice_queues')).not.toContain('promise_broken_at');
    expect(await columns('sluice_queue_depths')).toEqual([]);
    expect(await columns('sluice_workers')).not.toContain('metrics');
    for (const m of [queuesPromise, queueDepths, workersMetrics]) {
      await m.up(knex, tables);
      await m.up(knex, tables);
    }
    expect(await columns('sluice_queues')).toEqual(
      expect.arrayContaining([
        'queue',
        'paused_at',
        'updated_at',
        'promise_start_within_ms',
        'promise_max_ready',
        'promise_broken_at',
      ]),
    );
    expect(await columns('sluice_queue_depths')).toContain('oldest_ready_ms');
    expect((await columns('sluice_workers')).at(-1)).toBe('metrics');
    expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['kept']);
  });
});
