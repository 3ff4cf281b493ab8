import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { defined, integerIn } from '../options.ts';
import { liveJobIds } from '../queues/liveJobIds.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';

/** Params: ?1 after job id, ?2 limit. One page of debounce keys in job id order (ix_job). */
const sqlPage = (t: Tables) => `
SELECT queue, debounce_key, job_id
FROM ${t.jobDebounces}
WHERE job_id > ?
ORDER BY job_id
LIMIT ?`;

/**
 * Params: ?1 (queue, key, job id) triples (list). Deletes keys whose job is gone, each only while it
 * still names that job (an enqueue that pointed it at a new job since keeps it). A key an enqueue
 * holds right now is waited for at most 2 s, then left for the next pass. affectedRows = keys freed.
 */
const sqlDelete = (t: Tables) => `
/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */
DELETE /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ FROM ${t.jobDebounces}
WHERE (queue, debounce_key, job_id) IN (?)`;

/** pruneDebounces' options. Every field is optional. */
export interface PruneDebouncesOptions {
  /** Keys read per pass. @defaultValue 500 */
  readonly batchSize?: number;
}

type Resolved = Readonly<Required<PruneDebouncesOptions>>;

/**
 * Debounce keys whose job has started and finished (or was cancelled) are dead weight: the next
 * enqueue of the key would write a new job anyway. One page per pass, from a cursor over ix_job that
 * wraps, so a pass costs three bounded statements whatever the number of keys; a key whose job is
 * still live (waiting or running) stays.
 */
export function pruneDebounces(
  { db, tables }: TaskDb,
  options: PruneDebouncesOptions = {},
): MaintenanceTask<'pruneDebounces', 'pruned', Resolved> {
  const resolved: Resolved = { batchSize: TASK_DEFAULTS.batchSize, ...defined(options) };
  integerIn('batchSize', resolved.batchSize, 1, 10_000);
  let cursor = 0;
  return {
    name: 'pruneDebounces',
    options: resolved,
    async runOnce() {
      const page = await db.select<{ queue: string; debounce_key: string; job_id: number | string }>(sqlPage(tables), [
        cursor,
        resolved.batchSize,
      ]);
      cursor = page.length < resolved.batchSize ? 0 : Number(page[page.length - 1]?.job_id);
      return { pruned: await pruneGone(db, tables, page) };
    },
  };
}

async function pruneGone(
  db: Executor,
  tables: Tables,
  page: readonly { queue: string; debounce_key: string; job_id: number | string }[],
): Promise<number> {
  if (page.length === 0) return 0;
  const live = await liveJobIds(
    db,
    tables,
    page.map((r) => Number(r.job_id)),
  );
  const gone = page.filter((r) => !live.has(Number(r.job_id))).map((r) => [r.queue, r.debounce_key, Number(r.job_id)]);
  if (gone.length === 0) return 0;
  return (await db.write(sqlDelete(tables), [gone])).affectedRows;
}
