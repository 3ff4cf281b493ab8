import type { Tables } from '../db/tables.ts';
import type { JobFilter } from './jobFilter.ts';
import { liveStateSql, tableOfState } from './jobState.ts';
import { ID_KEY, type Plan, Residual, type Segment, type SegmentKey } from './Plan.ts';
import { liveKeysOf, QueueWalk } from './QueueWalk.ts';
import { queueHeads } from './queueHeads.ts';
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
 * - live jobs, by queue (all live queues in name order when none is given, read a thousand names
 *   and their free priorities per statement: queueHeads.ts): ix_head, in the claim's own order —
 *   per priority, the free jobs by run_at, id (waiting: run_at <= NOW(3); delayed and retrying:
 *   run_at > NOW(3), told apart by retry_times as a residual); then the running ones by lock_id
 *   (only for a queue that held a claim when its name was read).
 * - history (completed, cancelled): ix_finished, newest first; outcome, queue, name and batch are
 *   residual (a batch's walk starts at the batch's creation).
 * - dead: ix_queue_failed by queue, ix_batch by batch, else ix_failed, newest first; re-driven
 *   rows (their job lives again under a new id) are left out.
 */

const FINISHED_KEYS: readonly SegmentKey[] = [
  { sql: 'j.finished_at', field: 'finished_at', kind: 'time' },
  { sql: 'j.job_id', field: 'id', kind: 'id' },
];
const FAILED_KEYS: readonly SegmentKey[] = [{ sql: 'j.failed_at', field: 'finished_at', kind: 'time' }, ID_KEY];

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

function livePlan(t: Tables, filter: JobFilter): Plan {
  const residual = new Residual();
  if (filter.name !== undefined) residual.add('j.name = ?', filter.name);
  if (filter.from !== undefined) residual.add('j.created_at >= ?', filter.from);
  if (filter.to !== undefined) residual.add('j.created_at < ?', filter.to);
  const { state } = filter;
  if (filter.batchId !== undefined) {
    if (filter.queue !== undefined) residual.add('j.queue = ?', filter.queue);
    if (state !== undefined) residual.add(`${liveStateSql('j')} = ?`, state);
    const segment: Segment = {
      id: ['b'],
      from: `${t.jobs} j FORCE INDEX (ix_batch)`,
      where: 'j.batch_id = ?',
      params: [filter.batchId],
      keys: [ID_KEY],
      descending: false,
    };
    return {
      table: 'jobs',
      columns: LIVE_COLUMNS,
      residual: residual.value,
      segments: async function* () {
        yield segment;
      },
      single: segment,
      wide: false,
      keysOf: (id) => (id.length === 1 && id[0] === 'b' ? segment.keys : null),
    };
  }
  if (state === 'delayed') residual.add('j.retry_times = 0');
  if (state === 'retrying') residual.add('j.retry_times > 0');
  const walk = new QueueWalk(t, state);
  return {
    table: 'jobs',
    columns: LIVE_COLUMNS,
    residual: residual.value,
    async *segments(db, from) {
      if (filter.queue !== undefined) {
        yield* walk.queue(db, filter.queue, from?.[0] === filter.queue ? from : undefined);
        return;
      }
      if (from) yield* walk.queue(db, String(from[0]), from);
      const heads = queueHeads(db, t, {
        after: from ? String(from[0]) : undefined,
        priorities: walk.free,
        claimedOnly: !walk.free,
      });
      for await (const head of heads) yield* walk.queue(db, head.queue, undefined, head);
    },
    single: null,
    wide: filter.queue === undefined,
    keysOf: liveKeysOf,
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
        keys: FINISHED_KEYS,
        descending: true,
      } satisfies Segment;
    },
    single: null,
    wide: false,
    keysOf: (id) => (id.length === 1 && id[0] === 'h' ? FINISHED_KEYS : null),
  };
}

function deadPlan(t: Tables, filter: JobFilter): Plan {
  const residual = new Residual();
  residual.add('j.redriven_at IS NULL');
  if (filter.name !== undefined) residual.add('j.name = ?', filter.name);
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
      keys: [ID_KEY],
      descending: true,
    };
  } else if (filter.queue !== undefined) {
    const range = timeRange('j.failed_at', filter.from, filter.to);
    segment = {
      id: ['d'],
      from: `${t.deadJobs} j FORCE INDEX (ix_queue_failed)`,
      where: `j.queue = ? AND ${range.sql}`,
      params: [filter.queue, ...range.params],
      keys: FAILED_KEYS,
      descending: true,
    };
  } else {
    const range = timeRange('j.failed_at', filter.from, filter.to);
    segment = {
      id: ['d'],
      from: `${t.deadJobs} j FORCE INDEX (ix_failed)`,
      where: range.sql,
      params: range.params,
      keys: FAILED_KEYS,
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
    single: segment,
    wide: false,
    keysOf: (id) => (id.length === 1 && id[0] === 'd' ? segment.keys : null),
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
