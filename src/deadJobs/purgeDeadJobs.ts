import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type DeadJobFilter, deadJobConditions } from './deadJobFilter.ts';

/** Params: filter values…, ?limit. Deletes one bounded batch of matching dead jobs. affectedRows = rows deleted. */
const sqlPurgeBatch = (t: Tables, where: string) => `
DELETE FROM ${t.deadJobs}
WHERE ${where}
ORDER BY id
LIMIT ?`;

/** Deletes matching dead jobs (not re-driven ones' history) in bounded batches with a pause between. */
export async function purgeDeadJobs(
  db: Executor,
  tables: Tables,
  filter: DeadJobFilter = {},
  options: { batchSize?: number } = {},
): Promise<{ purged: number }> {
  const batchSize = options.batchSize ?? 1000;
  const { sql, params } = deadJobConditions(filter, tables);
  let purged = 0;
  for (;;) {
    const { affectedRows } = await db.write(sqlPurgeBatch(tables, sql), [...params, batchSize]);
    purged += affectedRows;
    if (affectedRows < batchSize) return { purged };
    await sleep(Math.random() * 20);
  }
}
