import type mysql from 'mysql2/promise';

const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/**
 * Makes every table of `database` (but the migrations' own) as it was when created: no rows, and
 * the AUTO_INCREMENT counter back at 1. TRUNCATE does that, but costs tens of milliseconds a table
 * whether or not the table holds anything (InnoDB drops and recreates it), and a test touches a
 * few of the twenty-odd tables: so only tables with a row or a moved counter are truncated, found
 * with one statement. A table that is empty with its counter at 1 is already what TRUNCATE makes.
 */
export async function emptyTables(admin: mysql.Connection, database: string): Promise<void> {
  const [tables] = (await admin.query(
    `SELECT table_name AS t, auto_increment AS counter
     FROM information_schema.tables
     WHERE table_schema = ? AND table_name NOT LIKE '%migrations%'`,
    [database],
  )) as unknown as [{ t: string; counter: number | string | null }[]];
  if (tables.length === 0) return;
  const [filled] = (await admin.query(
    tables.map(({ t }) => `(SELECT ? AS t FROM \`${database}\`.\`${t}\` LIMIT 1)`).join(' UNION ALL '),
    tables.map(({ t }) => t),
  )) as unknown as [{ t: string }[]];
  const withRows = new Set(filled.map(({ t }) => t));
  for (const { t, counter } of tables) {
    if (withRows.has(t) || Number(counter ?? 1) > 1) await admin.query(`TRUNCATE TABLE \`${database}\`.\`${t}\``);
  }
}

/**
 * MySQL 8 caches information_schema.tables (AUTO_INCREMENT among it) for a day by default; this
 * session must read the live counter. MariaDB always does, and has no such variable.
 */
export async function readLiveTableStats(admin: mysql.Connection): Promise<void> {
  try {
    await admin.query('SET SESSION information_schema_stats_expiry = 0');
  } catch (error) {
    if ((error as { errno?: number }).errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw error;
  }
}
