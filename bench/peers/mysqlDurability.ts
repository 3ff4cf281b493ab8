/** What a commit on the MySQL/MariaDB server survives, read from its settings: sluice's and the raw loop's row. */
import type { Connection, RowDataPacket } from 'mysql2/promise';

/** Params: none. Returns the redo flush policy, whether the binary log is on and its sync period. */
const SQL_DURABILITY = 'SELECT @@innodb_flush_log_at_trx_commit AS flush, @@log_bin AS binlog, @@sync_binlog AS sync';

export async function mysqlDurability(conn: Pick<Connection, 'query'>): Promise<string> {
  const [rows] = await conn.query<RowDataPacket[]>(SQL_DURABILITY);
  const row = rows[0];
  const binlog = Number(row?.binlog) === 1 ? `, binlog on, sync_binlog ${row?.sync}` : '';
  return Number(row?.flush) === 1
    ? `fsync per commit (innodb_flush_log_at_trx_commit 1${binlog})`
    : `redo fsynced about once a second (innodb_flush_log_at_trx_commit ${row?.flush}${binlog})`;
}
