import type { Knex } from 'knex';
import { type Executor, fromKnex } from '../../src/db/executor.ts';
import type { TestDatabase } from './testDatabase.ts';

/**
 * Factories that put rows into any state directly (River's testfactory). Times are expressions
 * on the DB clock, so a test backdates a column instead of sleeping: `lockedAt: ago(2 * HOUR)`.
 */

export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** A time on the database clock, rendered as SQL. */
export interface DbTime {
  readonly sql: string;
}

/** NOW(3) − ms, on the DB clock. */
export function ago(ms: number): DbTime {
  return { sql: `NOW(3) - INTERVAL ${Math.round(ms * 1000)} MICROSECOND` };
}

/** NOW(3) + ms, on the DB clock. */
export function fromNow(ms: number): DbTime {
  return { sql: `NOW(3) + INTERVAL ${Math.round(ms * 1000)} MICROSECOND` };
}

export const dbNow: DbTime = { sql: 'NOW(3)' };

export interface JobState {
  queue?: string;
  name?: string;
  payload?: unknown;
  priority?: number;
  runAt?: DbTime;
  lockId?: string;
  lockedAt?: DbTime | null;
  retryTimes?: number;
  maxRetries?: number | null;
  batchId?: number | null;
  idempotencyKey?: string | null;
  lastError?: string | null;
}

/**
 * Inserts one job row in the given state and returns its id. A claimed state needs both lockId
 * and lockedAt (defaults to NOW(3) when lockId is set); a free one has the no-claim locked_at.
 */
export async function insertJob(db: TestDatabase, state: JobState = {}): Promise<number> {
  const lockId = state.lockId ?? '';
  const lockedAt = state.lockedAt === undefined ? (lockId ? dbNow : null) : state.lockedAt;
  const runAt = state.runAt ?? dbNow;
  const [header] = (await db.sluice.knex.raw(
    `INSERT INTO sluice_jobs
       (queue, name, payload, priority, run_at, lock_id, locked_at, retry_times, max_retries, batch_id, idempotency_key, last_error, created_at)
     VALUES (?, ?, ?, ?, ${runAt.sql}, ?, ${lockedAt === null ? 'DEFAULT' : lockedAt.sql}, ?, ?, ?, ?, ?, NOW(3))`,
    [
      state.queue ?? 'default',
      state.name ?? 'work',
      JSON.stringify(state.payload ?? {}),
      state.priority ?? 0,
      lockId,
      state.retryTimes ?? 0,
      state.maxRetries ?? null,
      state.batchId ?? null,
      state.idempotencyKey ?? null,
      state.lastError ?? null,
    ],
  )) as [{ insertId: number }];
  return Number(header.insertId);
}

/** Inserts `count` jobs in the same state; returns their ids in insertion order. */
export async function insertJobs(db: TestDatabase, count: number, state: JobState = {}): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) ids.push(await insertJob(db, state));
  return ids;
}

/** The full stored row of a job (every column), or undefined when it is gone. */
/** A live job's row (the named columns, or all), or undefined once it left the live table. */
export async function jobRow<T = Record<string, unknown>>(
  db: TestDatabase,
  id: number,
  columns = '*',
): Promise<T | undefined> {
  const [row] = await db.query<T>(`SELECT ${columns} FROM sluice_jobs WHERE id = ?`, [id]);
  return row;
}

export async function deadRow(db: TestDatabase, id: number): Promise<Record<string, unknown> | undefined> {
  const [row] = await db.query<Record<string, unknown>>('SELECT * FROM sluice_dead_jobs WHERE id = ?', [id]);
  return row;
}

/** COUNT(*) of one table (optionally with a WHERE clause and its params). */
export async function countRows(
  db: TestDatabase,
  table: string,
  where = '1 = 1',
  params: unknown[] = [],
): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`, params);
  return Number(row?.n);
}

/** The Executor and table names the operations in src/worker and src/maintenance take. */
export function operationsOf(db: TestDatabase): {
  exec: Executor;
  tables: TestDatabase['sluice']['tables'];
  knex: Knex;
} {
  return { exec: fromKnex(db.sluice.knex), tables: db.sluice.tables, knex: db.sluice.knex };
}

/** locked_at of a free job (the column's default: no claim), as the test connection reads it. */
export const NO_CLAIM = new Date('1970-01-01T00:00:01.000Z');
