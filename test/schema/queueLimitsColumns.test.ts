import { describe, expect, it } from 'vitest';
import * as queueLimits from '../../migrations/202611260800_add_queues_limits.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * Migration 202611260800: a queue's limits, its rate window and its pause-until on the queues row.
 * Re-runnable (MySQL commits DDL as it goes: a migration stopped half-way is run again), and the
 * queue rows written before survive it.
 */
const db = useTestDatabase('queue_limits_columns');

const LIMIT_COLUMNS = [
  'concurrency_cap',
  'rate_limit',
  'rate_interval_ms',
  'rate_window_ms',
  'rate_used',
  'limit_claims',
  'paused_until',
];

async function columns(): Promise<string[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT column_name AS name FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = 'sluice_queues' ORDER BY ordinal_position`,
  );
  return rows.map((r) => r.name);
}

describe('the queue limits migration', () => {
  it('goes down and up again, twice over, keeping the queue rows', async () => {
    const { knex, tables } = db.sluice;
    await db.sluice.queues.pause('kept');
    await queueLimits.down(knex, tables);
    expect(await columns()).not.toContain('concurrency_cap');
    await queueLimits.up(knex, tables);
    await queueLimits.up(knex, tables);
    expect((await columns()).slice(-LIMIT_COLUMNS.length)).toEqual(LIMIT_COLUMNS);
    expect((await db.sluice.queues.paused()).map((p) => p.queue)).toEqual(['kept']);
  });
});
