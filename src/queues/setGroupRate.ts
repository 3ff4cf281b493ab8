import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 queue, ?2 group, ?3 limit, ?4 interval (the new row), ?5 limit, ?6 interval. Sets one
 * group's own rate (NULL: the queue's groupRate default applies), creating its row if it has none.
 * Its reservation cursor stays: jobs already reserved keep their starts. Idempotent.
 */
const sqlSetRate = (t: Tables) => `
INSERT INTO ${t.jobGroups} (queue, group_key, rate_limit, rate_interval_ms, updated_at)
VALUES (?, ?, ?, ?, NOW(3))
ON DUPLICATE KEY UPDATE rate_limit = ?,
                        rate_interval_ms = ?,
                        updated_at = NOW(3)`;

/** Sets the rate of one group of `queue` (null removes it); queue, group and rate checked by the caller. */
export async function setGroupRate(
  db: Executor,
  tables: Tables,
  queue: string,
  group: string,
  rate: { readonly limit: number; readonly intervalMs: number } | null,
): Promise<void> {
  const limit = rate?.limit ?? null;
  const intervalMs = rate?.intervalMs ?? null;
  await db.write(sqlSetRate(tables), [queue, group, limit, intervalMs, limit, intervalMs]);
}
