import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { BELOW_SMALLINT, nextFreePriority } from '../queues/nextFreePriority.ts';
import { nextQueue } from '../queues/nextQueue.ts';
import type { JobFilter } from './jobFilter.ts';
import { liveStateSql, tableOfState } from './jobState.ts';
import { batchCreatedAt } from './segmentSeeks.ts';

/**
 * How a listing (or a count) walks the tables: which index, in which ranges, in which order.
 * Every walk is a sequence of *segments*, each one index range read in index order from a keyset
 * position — never OFFSET, never a sort. Filters the index serves narrow the range; the others are
 * a *residual* evaluated per row read, so a page reads a bounded number of index entries
 * (listJobs' scanLimit) whatever the filter. FORCE INDEX is there because on a large range
 * MariaDB may prefer `ref` on the leading columns over the `range` the keyset opens, and then
 * reads from the start of the range instead of from the cursor (measured: 8,056 entries read for
 * a 51-row page).
 *
 * - live jobs, by batch: ix_batch (batch_id = ?), by id.
 * - live jobs, by queue (all live queues in name order when none is given; each found by one
 *   MIN() seek): ix_head, in the claim's own order — per priority (each found by a MIN() seek),
 *   the free jobs by run_at, id (waiting: run_at <= NOW(3); delayed and retrying: run_at >
 *   NOW(3), told apart by retry_times as a residual); then the running ones by lock_id.
 * - history (completed, cancelled): ix_finished, newest first; outcome, queue, name and batch are
 *   residual (a batch's walk starts at the batch's creation).
 * - dead: ix_queue_failed by queue, ix_batch by batch, else ix_failed, newest first; re-driven
 *   rows (their job lives again under a new id) are left out.
 */

/** One index range, read in index order. */
export interface Segment {
  /** Names the segment in a cursor. */
  readonly id: readonly (string | number)[];
  /** `<table> j FORCE INDEX (<index>)` */
  readonly from: string;
  /** The range (the index prefix), with `?` params. */
  readonly where: string;
  readonly params: readonly unknown[];
  /** The key columns in index order (`sql`) and the field of the summary row each is read back as. */
  readonly keys: readonly { readonly sql: string; readonly field: string }[];
  readonly descending: boolean;
}

/** A segment's ORDER BY: its keys in index order, in its direction. */
export function orderBy(segment: Segment): string {
  return segment.keys.map((k) => `${k.sql}${segment.descending ? ' DESC' : ''}`).join(', ');
}

export interface Plan {
  readonly table: 'jobs' | 'history' | 'dead';
  /** The SELECT list of a summary row (alias j). */
  readonly columns: string;
  /** Filters the index does not serve, as SQL over j's columns; null when the range is exact. */
  readonly residual: { readonly sql: string; readonly params: readonly unknown[] } | null;
  /** The segments in order, from the one `from` names (or the first). */
  segments(db: Executor, from?: readonly (string | number)[]): AsyncIterable<Segment>;
}

const ERROR_LINE = "LEFT(SUBSTRING_INDEX(j.last_error, '\\n', 1), 200)";

const LIVE_COLUMNS = `j.id, ${liveStateSql('j')} AS state, j.queue, j.name, j.priority, j.retry_times, j.max_retries,
  j.run_at, j.lock_id, IF(j.lock_id = '', NULL, j.locked_at) AS locked_at, j.batch_id, j.created_at,
  NULL AS finished_at, ${ERROR_LINE} AS error`;
const HISTORY_COLUMNS = `j.job_id AS id, j.outcome AS state, j.queue, j.name, j.priority, j.retry_times, j.max_retries,
  NULL AS run_at, NULL AS lock_id, j.started_at AS locked_at, j.batch_id, j.created_at,
  j.finished_at, ${ERROR_LINE} AS error`;
const DEAD_COLUMNS = `j.id, 'dead' AS state, j.queue, j.name, j.priority, j.retry_times, j.max_retries,
  NULL AS run_at, NULL AS lock_id, NULL AS locked_at, j.batch_id, j.created_at,
  j.failed_at AS finished_at, ${ERROR_LINE} AS error`;

/** Pure (but for the seeks its segments make): the walk that serves a validated filter. */
export function planJobs(tables: Tables, filter: JobFilter): Plan {
  const table = filter.state ? tableOfState(filter.state) : 'jobs';
  if (table === 'history') return historyPlan(tables, filter);
  if (table === 'dead') return deadPlan(tables, filter);
  return livePlan(tables, filter);
}

class Residual {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  add(sql: string, ...params: unknown[]): void {
    this.clauses.push(sql);
    this.params.push(...params);
  }

  /** The residual of a plan (null when nothing is left to check per row). */
  get value(): Plan['residual'] {
    return this.clauses.length === 0 ? null : { sql: this.clauses.join(' AND '), params: this.params };
  }
}

function livePlan(t: Tables, filter: JobFilter): Plan {
  const residual = new Residual();
  if (filter.name !== undefined) residual.add('j.name = ?', filter.name);
  if (filter.from !== undefined) residual.add('j.created_at >= ?', filter.from);
  if (filter.to !== undefined) residual.add('j.created_at < ?', filter.to);
  if (filter.batchId !== undefined) return liveBatchPlan(t, filter, filter.batchId, residual);
  const { state } = filter;
  if (state === 'delayed') residual.add('j.retry_times = 0');
  if (state === 'retrying') residual.add('j.retry_times > 0');
  const segmentsOf = queueSegments(t, state);
  return {
    table: 'jobs',
    columns: LIVE_COLUMNS,
    residual: residual.value,
    async *segments(db, from) {
      if (filter.queue !== undefined) {
        yield* segmentsOf(db, filter.queue, from?.[0] === filter.queue ? from : undefined);
        return;
      }
      let queue = from ? String(from[0]) : await nextQueue(db, t, null);
      let resume = from;
      while (queue !== null) {
        yield* segmentsOf(db, queue, resume);
        resume = undefined;
        queue = await nextQueue(db, t, queue);
      }
    },
  };
}

/** A batch's live jobs: one ix_batch range, by id; queue and state are residual. */
function liveBatchPlan(t: Tables, filter: JobFilter, batchId: number, residual: Residual): Plan {
  if (filter.queue !== undefined) residual.add('j.queue = ?', filter.queue);
  if (filter.state !== undefined) residual.add(`${liveStateSql('j')} = ?`, filter.state);
  const segment: Segment = {
    id: ['b'],
    from: `${t.jobs} j FORCE INDEX (ix_batch)`,
    where: 'j.batch_id = ?',
    params: [batchId],
    keys: [{ sql: 'j.id', field: 'id' }],
    descending: false,
  };
  return {
    table: 'jobs',
    columns: LIVE_COLUMNS,
    residual: residual.value,
    segments: async function* () {
      yield segment;
    },
  };
}

/**
 * The segments of one queue for a live state (or every live state): its free jobs priority by
 * priority, then its running jobs. Resumes from a cursor's segment id when given one.
 */
function queueSegments(t: Tables, state: JobFilter['state']) {
  const due =
    state === 'waiting'
      ? ' AND j.run_at <= NOW(3)'
      : state === 'delayed' || state === 'retrying'
        ? ' AND j.run_at > NOW(3)'
        : '';
  const free = state !== 'running';
  const running = state === undefined || state === 'running';
  return async function* (db: Executor, queue: string, from?: readonly (string | number)[]) {
    if (free && from?.[1] !== 'r') yield* freeSegments(db, t, queue, due, from);
    if (running) yield runningSegment(t, queue);
  };
}

/** One queue's free jobs, one ix_head range per priority (each found by one seek), by run_at, id. */
async function* freeSegments(
  db: Executor,
  t: Tables,
  queue: string,
  due: string,
  from?: readonly (string | number)[],
): AsyncGenerator<Segment> {
  let priority = from?.[1] === 'f' ? Number(from[2]) : await nextFreePriority(db, t, queue, BELOW_SMALLINT);
  while (priority !== null) {
    yield {
      id: [queue, 'f', priority],
      from: `${t.jobs} j FORCE INDEX (ix_head)`,
      where: `j.queue = ? AND j.lock_id = '' AND j.priority = ?${due}`,
      params: [queue, priority],
      keys: [
        { sql: 'j.run_at', field: 'run_at' },
        { sql: 'j.id', field: 'id' },
      ],
      descending: false,
    };
    priority = await nextFreePriority(db, t, queue, priority);
  }
}

/** One queue's running jobs: ix_head's claimed range, by lock_id. */
function runningSegment(t: Tables, queue: string): Segment {
  return {
    id: [queue, 'r'],
    from: `${t.jobs} j FORCE INDEX (ix_head)`,
    where: `j.queue = ? AND j.lock_id > ''`,
    params: [queue],
    keys: [
      { sql: 'j.lock_id', field: 'lock_id' },
      { sql: 'j.priority', field: 'priority' },
      { sql: 'j.run_at', field: 'run_at' },
      { sql: 'j.id', field: 'id' },
    ],
    descending: false,
  };
}

function historyPlan(t: Tables, filter: JobFilter): Plan {
  const residual = new Residual();
  if (filter.state !== undefined) residual.add('j.outcome = ?', filter.state);
  if (filter.queue !== undefined) residual.add('j.queue = ?', filter.queue);
  if (filter.name !== undefined) residual.add('j.name = ?', filter.name);
  if (filter.batchId !== undefined) residual.add('j.batch_id = ?', filter.batchId);
  return {
    table: 'history',
    columns: HISTORY_COLUMNS,
    residual: residual.value,
    async *segments(db) {
      const since = filter.batchId === undefined ? undefined : await batchCreatedAt(db, t, filter.batchId);
      if (since === null) return; // no such batch
      const range = timeRange('j.finished_at', latest(filter.from, since), filter.to);
      yield {
        id: ['h'],
        from: `${t.jobHistory} j FORCE INDEX (ix_finished)`,
        where: range.sql,
        params: range.params,
        keys: [
          { sql: 'j.finished_at', field: 'finished_at' },
          { sql: 'j.job_id', field: 'id' },
        ],
        descending: true,
      } satisfies Segment;
    },
  };
}

function deadPlan(t: Tables, filter: JobFilter): Plan {
  const residual = new Residual();
  residual.add('j.redriven_at IS NULL');
  if (filter.name !== undefined) residual.add('j.name = ?', filter.name);
  const byTime = [
    { sql: 'j.failed_at', field: 'finished_at' },
    { sql: 'j.id', field: 'id' },
  ];
  let segment: Segment;
  if (filter.batchId !== undefined) {
    if (filter.queue !== undefined) residual.add('j.queue = ?', filter.queue);
    const range = timeRange('j.failed_at', filter.from, filter.to);
    if (range.params.length > 0) residual.add(range.sql, ...range.params);
    segment = {
      id: ['d'],
      from: `${t.deadJobs} j FORCE INDEX (ix_batch)`,
      where: 'j.batch_id = ?',
      params: [filter.batchId],
      keys: [{ sql: 'j.id', field: 'id' }],
      descending: true,
    };
  } else if (filter.queue !== undefined) {
    const range = timeRange('j.failed_at', filter.from, filter.to);
    segment = {
      id: ['d'],
      from: `${t.deadJobs} j FORCE INDEX (ix_queue_failed)`,
      where: `j.queue = ? AND ${range.sql}`,
      params: [filter.queue, ...range.params],
      keys: byTime,
      descending: true,
    };
  } else {
    const range = timeRange('j.failed_at', filter.from, filter.to);
    segment = {
      id: ['d'],
      from: `${t.deadJobs} j FORCE INDEX (ix_failed)`,
      where: range.sql,
      params: range.params,
      keys: byTime,
      descending: true,
    };
  }
  return {
    table: 'dead',
    columns: DEAD_COLUMNS,
    residual: residual.value,
    segments: async function* () {
      yield segment;
    },
  };
}

function timeRange(column: string, from: Date | undefined, to: Date | undefined) {
  const clauses = ['TRUE'];
  const params: unknown[] = [];
  if (from !== undefined) {
    clauses.push(`${column} >= ?`);
    params.push(from);
  }
  if (to !== undefined) {
    clauses.push(`${column} < ?`);
    params.push(to);
  }
  return { sql: clauses.join(' AND '), params };
}

function latest(a: Date | undefined, b: Date | undefined): Date | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
