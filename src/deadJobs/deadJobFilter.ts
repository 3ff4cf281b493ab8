import { escapeLike } from '../db/escapeLike.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { optionKeys } from '../options.ts';

/** Which dead jobs a list / re-drive / purge applies to. All fields optional; they combine with AND. */
export interface DeadJobFilter {
  /** Dead jobs of this queue. */
  queue?: string;
  /** Dead jobs of this job name. */
  name?: string;
  /** Dead for at least this long (failed_at <= NOW(3) - olderThanMs). */
  olderThanMs?: number;
  /** Dead for at most this long. */
  newerThanMs?: number;
  /** Only these dead-job ids. */
  ids?: number[];
  /** Also match rows already re-driven (kept as history). @defaultValue false */
  includeRedriven?: boolean;
  /**
   * Died of an error with this `code` (exactly): the code of its last kept attempt error (see
   * `keptAttempts`; `SLUICE_WORKER_DIED` or `SLUICE_CLAIM_EXPIRED` when the maintenance process
   * took its last claim back). A job dead with no kept error matches no code.
   */
  errorCode?: string;
  /** Died of an error whose text (its last_error: message, code and stack) contains this, ignoring case. */
  errorContains?: string;
}

export const DEAD_JOB_FILTER_KEYS = optionKeys<DeadJobFilter>({
  queue: true,
  name: true,
  olderThanMs: true,
  newerThanMs: true,
  ids: true,
  includeRedriven: true,
  errorCode: true,
  errorContains: true,
});

/**
 * The code of the error a dead job died of: its newest kept attempt error (one primary-key probe,
 * read backwards). A plain read in list and in redrive's SELECT … FOR UPDATE; purge's DELETE reads
 * it with a shared lock, on rows nothing writes once their job is dead.
 */
const sqlDiedOfCode = (t: Tables) => `(
    SELECT e.code
    FROM ${t.jobErrors} e
    WHERE e.job_id = ${t.deadJobs}.id
    ORDER BY e.attempt DESC
    LIMIT 1) = ?`;

/**
 * Pure: renders a filter as SQL conditions on `tables.deadJobs` (not aliased) with `?`
 * placeholders (values never concatenated), restricted to rows not yet re-driven unless
 * `includeRedriven`.
 */
export function deadJobConditions(filter: DeadJobFilter, tables: Tables): { sql: string; params: unknown[] } {
  const clauses = filter.includeRedriven ? ['TRUE'] : ['redriven_at IS NULL'];
  const params: unknown[] = [];
  if (filter.queue !== undefined) {
    clauses.push('queue = ?');
    params.push(filter.queue);
  }
  if (filter.name !== undefined) {
    clauses.push('name = ?');
    params.push(filter.name);
  }
  if (filter.olderThanMs !== undefined) {
    clauses.push('failed_at <= NOW(3) - INTERVAL ? MICROSECOND');
    params.push(milliseconds('olderThanMs', filter.olderThanMs) * 1000);
  }
  if (filter.newerThanMs !== undefined) {
    clauses.push('failed_at > NOW(3) - INTERVAL ? MICROSECOND');
    params.push(milliseconds('newerThanMs', filter.newerThanMs) * 1000);
  }
  if (filter.errorCode !== undefined) {
    clauses.push(sqlDiedOfCode(tables));
    params.push(filter.errorCode);
  }
  if (filter.errorContains !== undefined) {
    clauses.push('LOWER(last_error) LIKE LOWER(?)');
    params.push(`%${escapeLike(filter.errorContains)}%`);
  }
  if (filter.ids !== undefined) {
    if (filter.ids.length === 0) clauses.push('FALSE');
    else {
      clauses.push('id IN (?)');
      params.push(filter.ids);
    }
  }
  return { sql: clauses.join('\n  AND '), params };
}

function milliseconds(field: string, value: number): number {
  if (!Number.isFinite(value) || value < 0)
    throw new OptionsError(field, `must be a non-negative number of milliseconds (got ${value})`);
  return Math.round(value);
}
