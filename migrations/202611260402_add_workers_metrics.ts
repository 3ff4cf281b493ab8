import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A worker's own counters and histograms (JSON, src/worker/metricsSnapshot.ts): jobs claimed and
 * their outcomes per queue and job name (names bounded per worker), claim round trips, attempt
 * durations and start latencies in fixed buckets. Carried by the heartbeat's own statement, at
 * most every metricsIntervalMs and only when changed, and read by the metrics scrape with the
 * registry: one statement for the whole fleet. NULL for workers of earlier versions.
 * Re-runnable: the column is looked up first.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const [rows] = (await knex.raw(
    `SELECT 1 FROM information_schema.columns
     WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'metrics'`,
    [`${t.prefix}workers`],
  )) as [unknown[]];
  if (rows.length > 0) return;
  await knex.raw(`ALTER TABLE ${t.workers} ADD COLUMN metrics MEDIUMTEXT NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} DROP COLUMN metrics`);
}
