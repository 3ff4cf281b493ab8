import type { Knex } from 'knex';
import { tableIndexes } from '../src/db/tableIndexes.ts';
import type { Tables } from '../src/db/tables.ts';

/**
 * Drops `ix_idempotency (idempotency_key, queue)` from the live jobs table.
 *
 * InnoDB keeps an entry for every row in every secondary index, NULL key or not, so every job
 * paid for this index three times — on insert, on the completion's delete, and in the purge after
 * it — though few jobs carry a key. It served one statement: the enqueue's link from each key it
 * won to the job inserted for it. The link now reads the jobs its transaction inserted by primary
 * key, from the first id its INSERTs reported (reserveIdempotencyKeys.ts). Measured with the
 * drain of bench/drainAB.ts (c500, 100,000 jobs, history on): 29,953 → 31,202 jobs/s alone
 * (4 pairs); with the narrower lock_id of the next migration, 30,691 → 33,335 (6 pairs, every one
 * faster).
 *
 * Rolling upgrade: processes still running the previous version link a key through a join on
 * (queue, key), which without this index reads the queue's live jobs; upgrade the enqueuing
 * processes soon after migrating. Re-runnable: the index is looked up first. On Galera the ALTER
 * replicates as total order isolation (an in-place index drop).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  if ((await tableIndexes(knex, `${t.prefix}jobs`)).has('ix_idempotency'))
    await knex.raw(`ALTER TABLE ${t.jobs} DROP INDEX ix_idempotency`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  if (!(await tableIndexes(knex, `${t.prefix}jobs`)).has('ix_idempotency'))
    await knex.raw(`ALTER TABLE ${t.jobs} ADD INDEX ix_idempotency (idempotency_key, queue)`);
}
