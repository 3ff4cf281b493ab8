import type { Knex } from 'knex';
import type { Tables } from '../src/db/tables.ts';

/**
 * Drops ix_queue_finished from job_history: no query of sluice reads it (retention prunes by
 * ix_finished), yet every completed job wrote an entry into it. In an A/B trial (one worker,
 * concurrency 500, 100k no-op jobs, 4 runs each) the drain went from a median ~16,300 to
 * ~17,700 jobs/s and mysqld from ~78 to ~72 µs per job.
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobHistory} DROP INDEX ix_queue_finished`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(`ALTER TABLE ${t.jobHistory} ADD INDEX ix_queue_finished (queue, finished_at)`);
}
