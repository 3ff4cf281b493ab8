import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { integerIn } from '../options.ts';
import { checkCursor, decodeCursor, encodeCursor } from './jobCursor.ts';
import type { SegmentKey } from './Plan.ts';

/** The key of a changes cursor: the last (finished_at, id) read in the history, then in dead jobs. */
const CHANGES_KEYS: readonly SegmentKey[] = [
  { sql: 'h.finished_at', field: 'at', kind: 'time' },
  { sql: 'h.job_id', field: 'id', kind: 'id' },
  { sql: 'd.failed_at', field: 'at', kind: 'time' },
  { sql: 'd.id', field: 'id', kind: 'id' },
];
/**
 * Params: ?1 after time, ?2 after time, ?3 after id, ?4 settle in microseconds, ?5 limit. Jobs
 * that completed or were cancelled after a position, oldest first: one range of ix_finished
 * (finished_at, then job_id through the index's primary-key suffix), read from the position on.
 */
const sqlHistory = (t: Tables) => `
SELECT job_id AS id, outcome AS state, queue, name, finished_at AS at
FROM ${t.jobHistory} FORCE INDEX (ix_finished)
WHERE (finished_at > ? OR (finished_at = ? AND job_id > ?))
  AND finished_at <= NOW(3) - INTERVAL ? MICROSECOND
ORDER BY finished_at, job_id
LIMIT ?`;

/** Params: as sqlHistory. Jobs that died after a position, oldest first: one range of ix_failed. */
const sqlDead = (t: Tables) => `
SELECT id, 'dead' AS state, queue, name, failed_at AS at
FROM ${t.deadJobs} FORCE INDEX (ix_failed)
WHERE (failed_at > ? OR (failed_at = ? AND id > ?))
  AND failed_at <= NOW(3) - INTERVAL ? MICROSECOND
ORDER BY failed_at, id
LIMIT ?`;

/** Params: ?1 settle in microseconds. Where a first poll starts: now, less the settle time, on the DB clock. */
const sqlStart = `SELECT NOW(3) - INTERVAL ? MICROSECOND AS at`;

export interface JobChange {
  readonly id: number;
  readonly state: 'completed' | 'cancelled' | 'dead';
  readonly queue: string;
  readonly name: string;
  /** When it finished (or died), on the DB clock. */
  readonly at: Date;
}

export interface ChangesOptions {
  /** The `cursor` of the previous call; without one, changes from now on (or from `since`). */
  readonly after?: string;
  /** Without `after`: start at this time instead of now. */
  readonly since?: Date;
  /** Most changes per call. @defaultValue 500 (at most 10,000) */
  readonly limit?: number;
  /**
   * Rows stamped less than this long ago are left for the next poll: a finish is stamped by
   * NOW(3) when its statement starts and becomes visible at its commit, so a row can appear behind
   * a position already read; this lag lets such a commit land first. @defaultValue 1,000
   */
  readonly settleMs?: number;
}

/**
 * What finished since a cursor — completed, cancelled and dead jobs, oldest first — for a
 * dashboard or any process that shows other processes' completions by polling. Each call is two
 * index range reads from the cursor on; pass the returned cursor to the next call.
 */
export async function jobChanges(
  db: Executor,
  tables: Tables,
  options: ChangesOptions = {},
): Promise<{ changes: JobChange[]; cursor: string }> {
  const limit = integerIn('limit', options.limit ?? 500, 1, 10_000);
  const settleUs = integerIn('settleMs', options.settleMs ?? 1_000, 0) * 1000;
  let history: [Date, number];
  let dead: [Date, number];
  if (options.after !== undefined) {
    const cursor = decodeCursor(options.after);
    const [ht, hid, dt, did] = checkCursor(cursor, CHANGES_KEYS, options.after).key as [Date, number, Date, number];
    if (cursor.key.length !== CHANGES_KEYS.length)
      throw new OptionsError('after', 'is not a cursor returned by jobs.changes');
    history = [ht, hid];
    dead = [dt, did];
  } else {
    const [row] = await db.select<{ at: Date }>(sqlStart, [settleUs]);
    const start = options.since ?? (row?.at as Date);
    history = [start, 0];
    dead = [start, 0];
  }
  const read = (sql: string, [at, id]: [Date, number]) => db.select<RawChange>(sql, [at, at, id, settleUs, limit]);
  const [fromHistory, fromDead] = await Promise.all([read(sqlHistory(tables), history), read(sqlDead(tables), dead)]);
  const merged = [...fromHistory.map((r) => ({ r, dead: false })), ...fromDead.map((r) => ({ r, dead: true }))]
    .sort((a, b) => a.r.at.getTime() - b.r.at.getTime() || Number(a.r.id) - Number(b.r.id))
    .slice(0, limit);
  for (const { r, dead: isDead } of merged) {
    if (isDead) dead = [r.at, Number(r.id)];
    else history = [r.at, Number(r.id)];
  }
  return {
    changes: merged.map(({ r }) => ({ id: Number(r.id), state: r.state, queue: r.queue, name: r.name, at: r.at })),
    cursor: encodeCursor({ segment: ['changes'], key: [...history, ...dead] }),
  };
}

interface RawChange {
  id: number | string;
  state: JobChange['state'];
  queue: string;
  name: string;
  at: Date;
}
