import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Returns the ids among them this claim still holds.
 * A plain read: on the pool it is re-run after a transient conflict by the Executor.
 */
const sqlHeld = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)`;

/** The ids among `ids` whose job this claim (lockId) still holds: the read behind every "which were lost". */
export async function heldClaims(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
): Promise<Set<number>> {
  const rows = await db.select<{ id: number | string }>(sqlHeld(tables), [lockId, ids]);
  return new Set(rows.map((r) => Number(r.id)));
}
