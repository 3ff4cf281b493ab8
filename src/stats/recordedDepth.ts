import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { valuesTable } from '../db/valuesTable.ts';
import type { BoundedCount, QueueDepth } from './queueDepth.ts';

const COLUMNS = [
  'queue',
  'ready',
  'ready_exact',
  'not_due',
  'not_due_exact',
  'running',
  'running_exact',
  'dead',
  'dead_exact',
  'oldest_ready_ms',
  'held',
  'held_exact',
  'queues',
  'queues_exact',
] as const;

/**
 * Params: the COLUMNS of each of `rows` rows, in order. Writes one reading per queue, all stamped
 * with this statement's NOW(3). One statement per pass, however many queues. Autocommit: re-run by
 * the Executor after a transient conflict (it writes the same values again).
 */
const sqlRecord = (t: Tables, rows: number) => `
INSERT INTO ${t.queueDepths} (${COLUMNS.join(', ')}, read_at)
SELECT ${COLUMNS.map((c) => `d.${c}`).join(', ')}, NOW(3)
FROM (${valuesTable(COLUMNS, rows)}) d
ON DUPLICATE KEY UPDATE ${COLUMNS.slice(1)
  .map((c) => `${c} = d.${c}`)
  .join(', ')}, read_at = NOW(3)`;

/** Params: ?1 the queues just read (list). Deletes the readings of every other queue (gone since). */
const sqlForgetOthers = (t: Tables) => `
DELETE FROM ${t.queueDepths}
WHERE queue NOT IN (?)`;

/** Params: none. Deletes every reading (no queue left to read). */
const sqlForgetAll = (t: Tables) => `
DELETE FROM ${t.queueDepths}`;

/**
 * Params: ?1 limit. The last readings in queue order, each with its age (ms, DB clock). One
 * primary-key range of a table with a row per queue.
 */
const sqlRead = (t: Tables) => `
SELECT ${COLUMNS.join(', ')},
       TIMESTAMPDIFF(MICROSECOND, read_at, NOW(3)) DIV 1000 AS read_age_ms
FROM ${t.queueDepths}
ORDER BY queue
LIMIT ?`;

/** One queue's depth as a maintenance pass read it, or the `(others)` reading (OTHERS_QUEUE). */
export interface QueueDepthReading extends QueueDepth {
  readonly queue: string;
  /** Dead jobs not yet re-driven. */
  readonly dead: BoundedCount;
  /**
   * Only on the reading named `(others)`: how many queues it sums — those past the ones the pass
   * read one by one (the first in name order, and the promised ones). Absent on a queue's own.
   */
  readonly queues?: BoundedCount;
}

/** A reading as stored, with how long ago it was taken. */
export interface RecordedQueueDepth extends QueueDepthReading {
  /** How long ago the maintenance leader took this reading (DB clock): at most a pass, while one runs. */
  readonly readAgeMs: number;
}

/** Readings per upsert: 12 placeholders each, well within the 65,535 a statement may have. */
const ROWS_PER_WRITE = 1_000;

/**
 * Records `readings` (one per queue): an upsert per thousand of them. Then, unless `read` is null
 * (a reading that goes on at the next pass), a delete of the readings of every queue not in `read`
 * (by default the queues of `readings`): the queues gone since.
 */
export async function recordQueueDepths(
  db: Executor,
  tables: Tables,
  readings: readonly QueueDepthReading[],
  read: readonly string[] | null = readings.map((r) => r.queue),
): Promise<void> {
  const params = readings.flatMap((r) => [
    r.queue,
    r.ready.count,
    r.ready.exact,
    r.notDue.count,
    r.notDue.exact,
    r.running.count,
    r.running.exact,
    r.dead.count,
    r.dead.exact,
    r.oldestReadyMs === null ? null : Math.max(0, r.oldestReadyMs),
    r.held.count,
    r.held.exact,
    r.queues?.count ?? null,
    r.queues?.exact ?? true,
  ]);
  const width = COLUMNS.length;
  for (let i = 0; i < readings.length; i += ROWS_PER_WRITE) {
    const rows = Math.min(ROWS_PER_WRITE, readings.length - i);
    await db.write(sqlRecord(tables, rows), params.slice(i * width, (i + rows) * width));
  }
  if (read === null) return;
  if (read.length === 0) await db.write(sqlForgetAll(tables));
  else await db.write(sqlForgetOthers(tables), [read]);
}

/** The recorded readings, in queue order, at most `max`: one statement. */
export async function recordedQueueDepths(db: Executor, tables: Tables, max: number): Promise<RecordedQueueDepth[]> {
  const rows = await db.select<Record<(typeof COLUMNS)[number] | 'read_age_ms', unknown>>(sqlRead(tables), [max]);
  const count = (n: unknown, exact: unknown): BoundedCount => ({ count: Number(n), exact: Boolean(Number(exact)) });
  return rows.map((r) => ({
    queue: String(r.queue),
    ready: count(r.ready, r.ready_exact),
    notDue: count(r.not_due, r.not_due_exact),
    running: count(r.running, r.running_exact),
    dead: count(r.dead, r.dead_exact),
    held: count(r.held, r.held_exact),
    oldestReadyMs: r.oldest_ready_ms === null ? null : Number(r.oldest_ready_ms),
    readAgeMs: Math.max(0, Number(r.read_age_ms)),
    ...(r.queues === null ? {} : { queues: count(r.queues, r.queues_exact) }),
  }));
}
