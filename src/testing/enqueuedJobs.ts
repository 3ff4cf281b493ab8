import type { Knex } from 'knex';
import { fromKnex } from '../db/executor.ts';
import { OptionsError, SluiceError } from '../errors.ts';
import { shownRunAt } from '../model/heldRunAt.ts';
import { storedPayloadJson } from '../model/storedPayload.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';
import type { Sluice } from '../Sluice.ts';
import { payloadMismatches } from './payloadMismatches.ts';

/**
 * Params: ?queue ?queue ?name ?name ?limit. The live jobs of an install (waiting, delayed, held,
 * retrying, running) by id, filtered on queue and name when given; a payload stored apart joins by
 * primary key. At most `limit` rows: the caller asks for one more than it returns to know it saw all.
 */
const sqlEnqueued = (jobs: string, jobPayloads: string) => `
SELECT j.id, j.queue, j.name, j.payload, jp.payload AS apart_payload, j.priority, j.run_at,
  j.max_retries, j.batch_id, j.idempotency_key, j.lock_id, j.created_at
FROM ${jobs} j
LEFT JOIN ${jobPayloads} jp ON jp.job_id = j.id AND j.payload = ''
WHERE (? IS NULL OR j.queue = ?) AND (? IS NULL OR j.name = ?)
ORDER BY j.id
LIMIT ?`;

/** Which enqueued jobs to find. Every field is optional; they combine with AND. */
export interface EnqueuedFilter {
  /** The job's name (its definition's name). */
  readonly name?: string;
  /** The job's queue. */
  readonly queue?: string;
  /**
   * A part of the payload: every key given must be there with an equal value (objects compared the
   * same way, key by key, arrays and other values as a whole); keys not given are not looked at.
   */
  readonly payload?: unknown;
}

/** Where and how far enqueuedJobs reads. */
export interface EnqueuedOptions {
  /**
   * The caller's knex transaction: read inside it, so jobs it enqueued and has not committed are
   * seen (and jobs another transaction has not committed are not).
   */
  readonly trx?: Knex.Transaction;
  /**
   * Most live jobs of the queue and name read. More than this matching the queue and name is an
   * error (SLUICE_TESTING_TOO_MANY), never a silently shortened list. @defaultValue 1,000 (at most 100,000)
   */
  readonly limit?: number;
}

/** assertEnqueued's options: enqueuedJobs' (trx, limit) and how many jobs must match. */
export interface AssertEnqueuedOptions extends EnqueuedOptions {
  /** Exactly this many live jobs must match. @defaultValue at least one */
  readonly count?: number;
}

/** A live job, as enqueuedJobs returns it. */
export interface EnqueuedJob {
  readonly id: number;
  readonly queue: string;
  readonly name: string;
  /** The payload as the handler will get it; undefined when the stored text does not decode (then `payloadError` says why). */
  readonly payload: unknown;
  readonly payloadError?: string;
  readonly priority: number;
  /** Not before; null for a job held back in a workflow (it gets its time when its parents finish). */
  readonly runAt: Date | null;
  readonly maxRetries: number | null;
  readonly batchId: number | null;
  readonly idempotencyKey: string | null;
  /** True while a worker holds a claim on it (it is running). */
  readonly claimed: boolean;
  readonly createdAt: Date;
}

interface EnqueuedRow {
  id: number;
  queue: string;
  name: string;
  payload: string;
  apart_payload: string | null;
  priority: number;
  run_at: Date;
  max_retries: number | null;
  batch_id: number | null;
  idempotency_key: string | null;
  lock_id: string;
  created_at: Date;
}

const FILTER_KEYS = ['name', 'queue', 'payload'];
export const OPTION_KEYS = ['trx', 'limit'];
const DEFAULT_LIMIT = 1_000;
const MAX_LIMIT = 100_000;

/**
 * The live jobs of `sluice`'s install that match `filter`, oldest first: what a test asserts on
 * after the code under test enqueued (Oban's all_enqueued). Pass `{ trx }` to look inside the
 * transaction the code enqueued in. Reads one statement of at most `limit` + 1 rows.
 */
export async function enqueuedJobs(
  sluice: Sluice,
  filter: EnqueuedFilter = {},
  options: EnqueuedOptions = {},
): Promise<EnqueuedJob[]> {
  checkFilter('enqueuedJobs', filter);
  const limit = checkOptions('enqueuedJobs', options, OPTION_KEYS);
  const { jobs, more } = await readEnqueued(sluice, filter, options.trx, limit);
  if (more) {
    throw new SluiceError(
      'SLUICE_TESTING_TOO_MANY',
      `enqueuedJobs: more than ${limit} live jobs${filter.queue === undefined ? '' : ` on queue ${filter.queue}`}${filter.name === undefined ? '' : ` named ${filter.name}`}: narrow the filter or raise limit`,
    );
  }
  return filter.payload === undefined
    ? jobs
    : jobs.filter((job) => payloadMismatches(filter.payload, job.payload).length === 0);
}

/**
 * The first `limit` live jobs of the filter's queue and name (its payload is not looked at), and
 * whether there are more: one statement.
 */
export async function readEnqueued(
  sluice: Sluice,
  filter: EnqueuedFilter,
  trx: Knex.Transaction | undefined,
  limit: number,
): Promise<{ jobs: EnqueuedJob[]; more: boolean }> {
  const db = fromKnex(trx ?? sluice.knex);
  const { queue = null, name = null } = filter;
  const rows = await db.select<EnqueuedRow>(sqlEnqueued(sluice.tables.jobs, sluice.tables.jobPayloads), [
    queue,
    queue,
    name,
    name,
    limit + 1,
  ]);
  return { jobs: rows.slice(0, limit).map(enqueuedJob), more: rows.length > limit };
}

/** Refuses a filter with unknown keys or names that are not strings (OptionsError naming the field of `caller`). */
export function checkFilter(caller: string, filter: EnqueuedFilter): void {
  rejectUnknownKeys(`${caller}'s filter`, filter, FILTER_KEYS);
  for (const field of ['name', 'queue'] as const) {
    const value = filter[field];
    if (value !== undefined && (typeof value !== 'string' || value === ''))
      throw new OptionsError(field, `must be a non-empty string (got ${JSON.stringify(value)})`);
  }
}

/** Refuses unknown keys and a trx that is no transaction; the limit, checked or its default. */
export function checkOptions(caller: string, options: EnqueuedOptions, known: readonly string[]): number {
  rejectUnknownKeys(caller, options, known);
  if (options.trx !== undefined && !isTransaction(options.trx))
    throw new OptionsError('trx', 'must be a knex transaction (knex.transaction(async (trx) => …))');
  return options.limit === undefined ? DEFAULT_LIMIT : integerIn('limit', options.limit, 1, MAX_LIMIT);
}

function isTransaction(trx: unknown): boolean {
  return typeof trx === 'function' && (trx as { isTransaction?: unknown }).isTransaction === true;
}

/** A row as a test sees it: the payload decoded, a bad one reported on the job rather than thrown. */
function enqueuedJob(row: EnqueuedRow): EnqueuedJob {
  let payload: unknown;
  let payloadError: string | undefined;
  try {
    payload = JSON.parse(
      row.apart_payload === null
        ? storedPayloadJson(row.payload, 'row')
        : storedPayloadJson(row.apart_payload, 'apart'),
    );
  } catch (error) {
    payloadError = `the stored payload does not decode: ${error instanceof Error ? error.message : String(error)}`;
  }
  return {
    id: Number(row.id),
    queue: row.queue,
    name: row.name,
    payload,
    ...(payloadError === undefined ? {} : { payloadError }),
    priority: row.priority,
    runAt: shownRunAt(row.run_at),
    maxRetries: row.max_retries,
    batchId: row.batch_id === null ? null : Number(row.batch_id),
    idempotencyKey: row.idempotency_key,
    claimed: row.lock_id !== '',
    createdAt: row.created_at,
  };
}
