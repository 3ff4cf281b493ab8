/**
 * Pure: a derived table of `rows` rows and the named columns, all bound as `?` parameters
 * (`SELECT ? AS a, ? AS b UNION ALL SELECT ?, ? …`), for joining per-row values a batch carries
 * (results, progress) into one INSERT … SELECT. Portable: MySQL and MariaDB spell VALUES row
 * constructors differently. The caller passes the values row by row, in column order.
 */
export function valuesTable(columns: readonly string[], rows: number): string {
  if (rows < 1) throw new Error('valuesTable needs at least one row');
  const first = `SELECT ${columns.map((c) => `? AS ${c}`).join(', ')}`;
  const rest = `SELECT ${columns.map(() => '?').join(', ')}`;
  return [first, ...Array.from({ length: rows - 1 }, () => rest)].join(' UNION ALL ');
}
