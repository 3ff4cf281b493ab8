/**
 * Server-side work of a drain, from global status counters read before and after it: statements
 * clients sent (Questions), InnoDB fsyncs (one per durable commit, roughly), row lock waits and
 * deadlocks. The benchmark's own probes are counted by the caller and subtracted.
 */
import type { Connection, RowDataPacket } from 'mysql2/promise';

const COUNTERS = ['Questions', 'Innodb_data_fsyncs', 'Innodb_row_lock_waits', 'Innodb_deadlocks'] as const;
export type Counter = (typeof COUNTERS)[number];
/** NaN for a counter the server does not have (MySQL has no Innodb_deadlocks). */
export type Counters = Record<Counter, number>;

/** Params: the counter names. One row (Variable_name, Value) per counter the server has. */
const SQL_STATUS = `
SHOW GLOBAL STATUS
WHERE Variable_name IN (?)`;

export async function readCounters(conn: Connection): Promise<Counters> {
  const [rows] = await conn.query<RowDataPacket[]>(SQL_STATUS, [COUNTERS]);
  const byName = new Map(rows.map((r) => [String(r.Variable_name).toLowerCase(), Number(r.Value)]));
  return Object.fromEntries(COUNTERS.map((c) => [c, byName.get(c.toLowerCase()) ?? Number.NaN])) as Counters;
}

export function difference(after: Counters, before: Counters): Counters {
  return Object.fromEntries(COUNTERS.map((c) => [c, after[c] - before[c]])) as Counters;
}
