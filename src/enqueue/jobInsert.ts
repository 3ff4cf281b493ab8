import { escape as sqlLiteral } from 'mysql2';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import { rowPayload } from '../model/storedPayload.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import type { GroupStart } from '../queues/reserveGroupStarts.ts';

/**
 * Which optional columns an INSERT of some jobs names. A column NULL for every one of its jobs
 * is left out and takes its default (NULL), and created_at always takes its default
 * (CURRENT_TIMESTAMP(3), the statement's time, as NOW(3) would give): the server then parses a
 * third less per row for the common job, which measurably speeds a 100,000-job batch.
 */
export interface JobColumns {
  readonly maxRetries: boolean;
  readonly backoff: boolean;
  readonly idempotencyKey: boolean;
  readonly batchId: boolean;
  /** A workflow's batch, or one with jobs of groups (limited, rated): every row names its jobs.flags. */
  readonly flags?: boolean;
  /** Some job names a group: every row names its group_key. */
  readonly groupKey?: boolean;
  /** Some job carries a trace context (NormalizedJob.trace): every row names traceparent and tracestate. */
  readonly trace?: boolean;
}

/** Pure: the columns these jobs need (`batchId` null: no batch). */
export function columnsFor(jobs: readonly NormalizedJob[], batchId: number | null): JobColumns {
  let maxRetries = false;
  let backoff = false;
  let idempotencyKey = false;
  let groupKey = false;
  let trace = false;
  for (const job of jobs) {
    maxRetries ||= job.maxRetries !== null;
    backoff ||= job.backoff !== null;
    idempotencyKey ||= job.idempotencyKey !== null;
    groupKey ||= job.group !== null;
    trace ||= job.trace != null;
  }
  return { maxRetries, backoff, idempotencyKey, batchId: batchId !== null, flags: groupKey, groupKey, trace };
}

/** The prefixes made so far, per install's tables and set of columns (at most 128 sets): built once each. */
const prefixes = new WeakMap<Tables, Map<number, string>>();

/**
 * `INSERT INTO jobs (…) VALUES ` for the given columns; tuples come from renderJobTuple with the
 * same columns. Built once per install and set of columns: a single enqueue does not rebuild it.
 */
export function insertJobsPrefix(t: Tables, columns: JobColumns): string {
  const key =
    Number(columns.maxRetries) |
    (Number(columns.backoff) << 1) |
    (Number(columns.batchId) << 2) |
    (Number(columns.idempotencyKey) << 3) |
    (Number(columns.flags === true) << 4) |
    (Number(columns.groupKey === true) << 5) |
    (Number(columns.trace === true) << 6);
  let built = prefixes.get(t);
  if (built === undefined) {
    built = new Map();
    prefixes.set(t, built);
  }
  let prefix = built.get(key);
  if (prefix === undefined) {
    prefix = buildPrefix(t, columns);
    built.set(key, prefix);
  }
  return prefix;
}

/**
 * renderJobTuple and singleJobInsert give their values in this order (the two rows are held equal
 * by test/enqueue/preparedEnqueue.test.ts).
 */
function buildPrefix(t: Tables, columns: JobColumns): string {
  const names = ['queue', 'name', 'payload', 'priority', 'run_at'];
  if (columns.maxRetries) names.push('max_retries');
  if (columns.backoff) names.push('backoff');
  if (columns.batchId) names.push('batch_id');
  if (columns.idempotencyKey) names.push('idempotency_key');
  if (columns.flags) names.push('flags');
  if (columns.groupKey) names.push('group_key');
  if (columns.trace) names.push('traceparent', 'tracestate');
  return `INSERT INTO ${t.jobs} (${names.join(', ')}) VALUES `;
}

const NO_GRAPH = { flags: 0, held: false };

/**
 * Pure: one job as a VALUES tuple (mysql2's escaping: text protocol, so no placeholder limit).
 * run_at comes from the DB clock unless an absolute time was given; a held job (in a workflow, with
 * parents) is parked at HELD_RUN_AT and its run_at kept in job_holds; a job of a rate-limited group
 * starts at the time its group reserved for it (`start`, reserveGroupStarts) and is flagged
 * groupRated, so that its claim counts its start (countGroupStarts). A payload stored apart
 * (rowPayload) is written as '' here and by writeApartPayloads in the same transaction.
 */
export function renderJobTuple(
  job: NormalizedJob,
  batchId: number | null,
  columns: JobColumns,
  graph: { readonly flags: number; readonly held: boolean } = NO_GRAPH,
  start: GroupStart | null = null,
): string {
  const runAt = graph.held
    ? `'${HELD_RUN_AT}'`
    : start !== null
      ? `'${new Date(start.atMs).toISOString().slice(0, 23).replace('T', ' ')}'`
      : runAtSql(job);
  const flags = start?.rated ? graph.flags | JOB_FLAGS.groupRated : graph.flags;
  const payload = sqlLiteral(rowPayload(job.storedPayload));
  let tuple = `(${sqlLiteral(job.queue)},${sqlLiteral(job.name)},${payload},${job.priority},${runAt}`;
  if (columns.maxRetries) tuple += `,${job.maxRetries ?? 'NULL'}`;
  if (columns.backoff) tuple += `,${job.backoff === null ? 'NULL' : sqlLiteral(job.backoff)}`;
  if (columns.batchId) tuple += `,${batchId ?? 'NULL'}`;
  if (columns.idempotencyKey) tuple += `,${job.idempotencyKey === null ? 'NULL' : sqlLiteral(job.idempotencyKey)}`;
  if (columns.flags) tuple += `,${flags}`;
  if (columns.groupKey) tuple += `,${job.group === null ? 'NULL' : sqlLiteral(job.group.key)}`;
  if (columns.trace) {
    const trace = job.trace ?? null;
    tuple += `,${trace === null ? 'NULL' : sqlLiteral(trace.traceparent)},${trace?.tracestate == null ? 'NULL' : sqlLiteral(trace.tracestate)}`;
  }
  return `${tuple})`;
}

/**
 * Pure: throws JobValidationError naming job `index` when its row, with the INSERT's `prefix`, is
 * over the server's statement limit once escaped: no chunking can send it.
 */
export function assertRowFits(prefix: string, tuple: string, index: number, maxStatementBytes: number): void {
  const bytes = Buffer.byteLength(prefix) + Buffer.byteLength(tuple);
  if (bytes > maxStatementBytes) {
    throw new JobValidationError(
      index,
      'payload',
      `is ${bytes} bytes once escaped for the server, over its max_allowed_packet (${maxStatementBytes} usable)`,
    );
  }
}

/** Pure: the job's intended run_at as SQL: its absolute time, or NOW(3) plus its delay on the DB clock. */
export function runAtSql(job: NormalizedJob): string {
  return job.runAt !== null
    ? `'${job.runAt.toISOString().slice(0, 23).replace('T', ' ')}'`
    : job.delayMs > 0
      ? `NOW(3) + INTERVAL ${job.delayMs * 1000} MICROSECOND`
      : 'NOW(3)';
}
