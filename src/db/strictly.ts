import type { Knex } from 'knex';

/** Runs one statement on one connection with STRICT_ALL_TABLES added to its sql_mode, then restores it. */
export async function strictly(knex: Knex, sql: string): Promise<void> {
  const conn = await knex.client.acquireConnection();
  const run = (text: string) => knex.raw(text).connection(conn);
  try {
    const [[mode]] = (await run('SELECT @@SESSION.sql_mode AS mode')) as [{ mode: string }[]];
    await run("SET SESSION sql_mode = CONCAT_WS(',', @@SESSION.sql_mode, 'STRICT_ALL_TABLES')");
    try {
      await run(sql);
    } finally {
      await knex.raw('SET SESSION sql_mode = ?', [mode?.mode ?? '']).connection(conn);
    }
  } finally {
    await knex.client.releaseConnection(conn);
  }
}
