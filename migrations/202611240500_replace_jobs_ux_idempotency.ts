import type { Knex } from 'knex';
import { tableIndexes } from '../src/db/tableIndexes.ts';
import type { Tables } from '../src/db/tables.ts';

/**
 * Replaces `UNIQUE ux_idempotency (queue, idempotency_key)` on the live jobs table by a plain
 * `ix_idempotency (idempotency_key, queue)`.
 *
 * On a Galera cluster a unique key's value is part of every write set, even when the key column
 * is NULL: `(queue, NULL)` named the queue in every insert, claim and delete, so any two writes to
 * one queue from different nodes failed certification (a probe of disjoint rows conflicted 22–27
 * times in 30; a drain saw 4,223 COMMIT-time 1213s). A plain index is not certified. Uniqueness
 * of idempotency keys is kept by the primary key of the idempotency_keys table, which every keyed
 * enqueue inserts into in the same transaction. The new index, key first, serves the one query
 * that needs it (the link UPDATE in reserveIdempotencyKeys: jobs by (queue, key)), and has no
 * `queue` prefix that the optimizer could prefer over ix_head for a queue scan.
 *
 * Re-runnable, and one ALTER (dropping and adding in one statement, so that no moment has
 * neither): the indexes present are looked up first. On Galera the ALTER replicates as total
 * order isolation (writes to the table wait for it on every node; an in-place index build).
 */
export async function up(knex: Knex, t: Tables): Promise<void> {
  const present = await tableIndexes(knex, `${t.prefix}jobs`);
  const changes = [
    ...(present.has('ux_idempotency') ? ['DROP INDEX ux_idempotency'] : []),
    ...(present.has('ix_idempotency') ? [] : ['ADD INDEX ix_idempotency (idempotency_key, queue)']),
  ];
  if (changes.length > 0) await knex.raw(`ALTER TABLE ${t.jobs} ${changes.join(', ')}`);
}

export async function down(knex: Knex, t: Tables): Promise<void> {
  await knex.raw(
    `ALTER TABLE ${t.jobs} DROP INDEX ix_idempotency, ADD UNIQUE INDEX ux_idempotency (queue, idempotency_key)`,
  );
}
