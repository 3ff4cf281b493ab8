import type { Knex } from 'knex';

/** The names of the indexes a table of the current database has (PRIMARY included): what a re-runnable migration checks first. */
export async function tableIndexes(knex: Knex, table: string): Promise<Set<string>> {
  const [rows] = (await knex.raw(
    `SELECT DISTINCT index_name AS name FROM information_schema.statistics
     WHERE table_schema = DATABASE() AND table_name = ?`,
    [table],
  )) as [{ name: string }[]];
  return new Set(rows.map((r) => r.name));
}
