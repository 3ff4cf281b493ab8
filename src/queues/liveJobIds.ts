import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Params: ?1 ids (list). Which of those jobs are still live (primary key reads). */
const sqlLiveJobs = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)`;

/**
 * Which of `ids` are live jobs still (waiting, held or running): what the pruning of rows that
 * outlive their job (debounce keys, group memberships) keeps. One bounded statement; none for no ids.
 */
export async function liveJobIds(db: Executor, tables: Tables, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.select<{ id: number | string }>(sqlLiveJobs(tables), [ids]);
  return new Set(rows.map((r) => Number(r.id)));
}
