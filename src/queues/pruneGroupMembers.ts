import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import { liveJobIds } from './liveJobIds.ts';

/** Params: ?1 after job id, ?2 limit. One page of group memberships in job id order (ix_job). */
const sqlPage = (t: Tables) => `
SELECT job_id
FROM ${t.jobGroupMembers}
WHERE job_id > ?
ORDER BY job_id
LIMIT ?`;

/** Params: ?1 job ids (list, all gone). Deletes their memberships (ix_job). affectedRows = rows deleted. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobGroupMembers}
WHERE job_id IN (?)`;

/** pruneGroupMembers' options. Every field is optional. */
export interface PruneGroupMembersOptions {
  /** Memberships read per pass. @defaultValue 500 */
  readonly batchSize?: number;
}

type Resolved = Readonly<Required<PruneGroupMembersOptions>>;

/**
 * The memberships of grouped jobs that have finished (or died, or were cancelled) go: one page per
 * pass from a cursor over ix_job that wraps, three bounded statements whatever the number of rows.
 * A gone job's id never comes back, so its rows are deleted without a further fence.
 */
export function pruneGroupMembers(
  { db, tables }: TaskDb,
  options: PruneGroupMembersOptions = {},
): MaintenanceTask<'pruneGroupMembers', 'pruned', Resolved> {
  const resolved: Resolved = { batchSize: TASK_DEFAULTS.batchSize, ...defined(options) };
  integerIn('batchSize', resolved.batchSize, 1, 10_000);
  let cursor = 0;
  return {
    name: 'pruneGroupMembers',
    options: resolved,
    async runOnce() {
      const page = (await db.select<{ job_id: number | string }>(sqlPage(tables), [cursor, resolved.batchSize])).map(
        (r) => Number(r.job_id),
      );
      cursor = page.length < resolved.batchSize ? 0 : (page[page.length - 1] as number);
      return { pruned: await pruneGone(db, tables, page) };
    },
  };
}

async function pruneGone(db: Executor, tables: Tables, page: readonly number[]): Promise<number> {
  if (page.length === 0) return 0;
  const live = await liveJobIds(db, tables, page);
  const gone = page.filter((id) => !live.has(id));
  if (gone.length === 0) return 0;
  return (await db.write(sqlDelete(tables), [gone])).affectedRows;
}
