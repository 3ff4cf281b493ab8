import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { heldClaims } from './heldClaims.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Touches locked_at of the rows this claim still holds.
 * affectedRows = rows still held (mysql2 counts matched rows). Autocommit: re-run by the
 * Executor after a transient conflict.
 */
const sqlExtend = (t: Tables) => `
UPDATE ${t.jobs}
SET locked_at = NOW(3)
WHERE lock_id = ?
  AND id IN (?)`;

/**
 * Fenced heartbeat for one claim's running jobs. Returns the ids whose claim was lost (empty in
 * the normal case; the extra read runs only when some were).
 */
export async function extendClaims(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
): Promise<number[]> {
  const { affectedRows } = await db.write(sqlExtend(tables), [lockId, ids]);
  if (affectedRows === ids.length) return [];
  if (affectedRows === 0) return [...ids];
  const held = await heldClaims(db, tables, lockId, ids);
  return ids.filter((id) => !held.has(id));
}
