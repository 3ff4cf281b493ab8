import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * maintenance_tasks: one row per maintenance task, written by the leader after each pass it led
 * (one multi-row upsert a pass): who ran it, when (the database's clock), how long it took, how
 * many rows it changed and whether it stopped with more to do. `sluice.workers.maintenance()` and the
 * dashboard's overview read it with the lease row to say whether maintenance is alive. A small
 * table of a row per task: no pass walks it. Re-runnable: CREATE TABLE IF NOT EXISTS.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`
CREATE TABLE IF NOT EXISTS ${t.maintenanceTasks} (
  task        VARCHAR(64)   NOT NULL,
  holder      VARCHAR(191)  NOT NULL,
  ran_at      DATETIME(3)   NOT NULL,
  duration_ms INT UNSIGNED  NOT NULL,
  changed     INT UNSIGNED  NOT NULL,
  behind      BOOLEAN       NOT NULL DEFAULT FALSE,
  PRIMARY KEY (task)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`DROP TABLE IF EXISTS ${t.maintenanceTasks}`);
}
