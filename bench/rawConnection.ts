/**
 * The raw side's connection, in a file of its own: rawWorker.ts runs in child processes started
 * without the sluice-source condition, so it must not import the sluice package (whose compiled
 * dist/ a clean clone does not have).
 */
import { type Connection, createConnection } from 'mysql2/promise';

/**
 * A plain mysql2 connection on the UTC session clock (as sluice's pool uses). Its collation is
 * the tables' own (utf8mb4_bin): under mysql2's default utf8mb4_general_ci, MariaDB 10.11 sorts
 * the whole free range for `UPDATE … ORDER BY … LIMIT` instead of reading ix_head in order.
 */
export async function connectRaw(url: string): Promise<Connection> {
  const conn = await createConnection({
    uri: url,
    charset: 'UTF8MB4_BIN',
    supportBigNumbers: true,
    bigNumberStrings: false,
  });
  await conn.query("SET time_zone = '+00:00'");
  return conn;
}
