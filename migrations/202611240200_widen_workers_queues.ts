import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * A worker lists its queues in its registry row: up to 100 names of up to 64 characters, more
 * than the VARCHAR(1024) it had (a worker on 20 long queue names failed to start with "Data too
 * long"). Re-runnable: MODIFY states the whole column.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} MODIFY COLUMN queues TEXT NOT NULL`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.workers} MODIFY COLUMN queues VARCHAR(1024) NOT NULL`);
}
