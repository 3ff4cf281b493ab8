import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { assertQueueName } from '../model/queueName.ts';
import { rejectUnknownKeys } from '../options.ts';
import { validateRate } from './queueLimits.ts';

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

/** One group's limits. An absent key leaves that limit as it is; null removes it. */
export interface GroupLimits {
  /** At most `limit` of the group's jobs start per `intervalMs`, reserved at enqueue. */
  readonly rate?: { readonly limit: number; readonly intervalMs: number } | null;
}

/** Sets the limits of one group of `queue`: the keys given, the others unchanged. */
export async function setGroupRate(
  db: Executor,
  tables: Tables,
  queue: string,
  group: string,
  limits: GroupLimits,
): Promise<void> {
  assertQueueName('queue', queue);
  if (typeof group !== 'string' || group.length < 1 || group.length > 191 || group.endsWith(' '))
    throw new OptionsError(
      'group',
      `must be a string of 1–191 characters, not ending in a space (got ${String(group)})`,
    );
  if (typeof limits !== 'object' || limits === null) throw new OptionsError('limits', 'must be an object');
  rejectUnknownKeys('a group limit', limits, ['rate']);
  if (limits.rate === undefined) throw new OptionsError('limits', 'sets nothing: give rate (null removes it)');
  validateRate('rate', limits.rate);
  const limit = limits.rate?.limit ?? null;
  const intervalMs = limits.rate?.intervalMs ?? null;
  await db.write(sqlSetRate(tables), [queue, group, limit, intervalMs, limit, intervalMs]);
}
