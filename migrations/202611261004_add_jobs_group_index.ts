import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * ix_group (queue, group_key) on jobs: pausing a group (a handler's `RateLimitedError` with
 * `{ pause: 'group' }`) moves the group's waiting jobs past the pause, found through this index in
 * bounded batches, never by a scan of the queue. Its cost: one more secondary-index entry for every
 * job (a job without a group has a short one: queue and NULL), written at enqueue and removed at
 * completion; claims do not change its columns. Measured with `npm run bench:quick` (enqueue
 * ratios in docs/flow-control.md). Online: ADD INDEX is an in-place, non-locking build on MariaDB
 * 10.6+ and MySQL 8.0 (ALGORITHM=INPLACE, LOCK=NONE). Re-runnable: skipped when the index is there.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.statistics
     WHERE table_schema = DATABASE() AND table_name = ? AND index_name = 'ix_group'`,
    [`${t.prefix}jobs`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.jobs} ADD INDEX ix_group (queue, group_key), ALGORITHM=INPLACE, LOCK=NONE`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobs} DROP INDEX ix_group`);
}
