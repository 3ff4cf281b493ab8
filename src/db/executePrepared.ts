/**
 * A write whose values travel apart from its text, for executePrepared: the text is one of a few per
 * install, so each connection prepares it once and every later write sends only the values.
 */
export interface PreparedWrite {
  readonly sql: string;
  readonly values: readonly unknown[];
}

type Done = (error: Error | null, result: { affectedRows: number; insertId: number }) => void;

/** The two forms of mysql2's callback API a prepared write uses. */
export interface PreparingConnection {
  execute(sql: string, values: unknown[], callback: Done): void;
  query(sql: string, values: unknown[], callback: Done): void;
}

/** ER_MAX_PREPARED_STMT_COUNT_REACHED: the server-wide max_prepared_stmt_count is used up (by anyone). */
const MAX_PREPARED_STATEMENTS_REACHED = 1461;

/**
 * Sends `statement` as a prepared statement (mysql2's execute: prepared on first use per connection
 * and kept in mysql2's per-connection cache): the server skips parsing the text, the client skips
 * escaping the values. A server whose prepared statements are used up gets the same write as text,
 * its values escaped by mysql2 (`query`), rather than an error.
 */
export function executePrepared(connection: PreparingConnection, statement: PreparedWrite, done: Done): void {
  const values = statement.values as unknown[];
  connection.execute(statement.sql, values, (error, result) => {
    if ((error as { errno?: number } | null)?.errno === MAX_PREPARED_STATEMENTS_REACHED)
      connection.query(statement.sql, values, done);
    else done(error, result);
  });
}
