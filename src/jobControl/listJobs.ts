import { countStatements } from '../db/countStatements.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { shownRunAt } from '../model/heldRunAt.ts';
import { integerIn, optionKeys, rejectUnknownKeys } from '../options.ts';
import { checkCursor, decodeCursor, encodeCursor, type JobCursor, type KeyValue } from './jobCursor.ts';
import { type JobFilter, validateJobFilter } from './jobFilter.ts';
import { planJobs } from './jobPlans.ts';
import type { JobState } from './jobState.ts';
import { MAX_STATEMENTS, orderBy, type Plan, type Segment } from './Plan.ts';

/**
 * Params: residual params…, the segment's range params…, keyset params…, ?limit. One chunk of a
 * segment (jobPlans.ts) from a keyset position, in index order, each row with whether it passes
 * the residual filter (`matches`): the rows read are bounded by the LIMIT, whatever the filter.
 */
export const sqlChunk = (plan: Plan, segment: Segment, fromKey: boolean) => `
SELECT ${plan.columns}, ${plan.residual?.sql ?? 'TRUE'} AS matches
FROM ${segment.from}
WHERE ${segment.where}${fromKey ? `\n  AND ${keyset(segment)}` : ''}
ORDER BY ${orderBy(segment)}
LIMIT ?`;

/** `(k1 > ? OR (k1 = ? AND (k2 > ? OR …)))`: rows after a key, as ranges the index can seek to. */
function keyset(segment: Segment): string {
  const op = segment.descending ? '<' : '>';
  const [last, ...rest] = [...segment.keys].reverse();
  let sql = `${last?.sql} ${op} ?`;
  for (const key of rest) sql = `(${key.sql} ${op} ? OR (${key.sql} = ? AND ${sql}))`;
  return sql;
}

/** The params of `keyset` for a key: every value but the last twice, in key order. */
function keysetParams(key: readonly KeyValue[]): KeyValue[] {
  return key.flatMap((v, i) => (i < key.length - 1 ? [v, v] : [v]));
}

/** One job as a listing shows it (jobs.get has everything). */
export interface JobSummary {
  readonly id: number;
  readonly state: JobState;
  readonly queue: string;
  readonly name: string;
  readonly priority: number;
  readonly retryTimes: number;
  readonly maxRetries: number | null;
  /** Live jobs: not before; null for a held job (it has no start time until it is released). */
  readonly runAt: Date | null;
  /** Running jobs: the claim (`<host>-<pid>~<token>`). */
  readonly lockId: string | null;
  /** Running jobs: when claimed (or last extended); completed and cancelled ones: when their last attempt started. */
  readonly lockedAt: Date | null;
  readonly batchId: number | null;
  readonly createdAt: Date;
  /** Completed, cancelled: when; dead: when it died. */
  readonly finishedAt: Date | null;
  /** The first line of the last error, if any. */
  readonly error: string | null;
}

export interface JobPage {
  /** Jobs per page. @defaultValue 50 (at most 1,000) */
  readonly limit?: number;
  /** The `next` of the previous page. */
  readonly after?: string;
  /**
   * Most index entries one page reads. A filter the index does not serve (a name, a state within
   * a shared range, a queue with a batch…) is checked row by row; a page that reaches this bound —
   * or 100 statements, when it walks past many queues or priorities — returns what it found with a
   * `next` to go on from (possibly no jobs at all). @defaultValue 5,000 (at most 100,000)
   */
  readonly scanLimit?: number;
}

export const JOB_PAGE_KEYS = optionKeys<JobPage>({ limit: true, after: true, scanLimit: true });

export interface JobList {
  readonly jobs: JobSummary[];
  /** Pass as `after` for the next page; null when the listing is complete. */
  readonly next: string | null;
}

/**
 * The most rows a chunk reads when a residual filter is checked per row: chunks start at a page's
 * worth and grow fourfold while rows keep failing the filter.
 */
const RESIDUAL_CHUNK = 1_000;

/**
 * One page of jobs matching `filter`, by keyset (jobPlans.ts says which index serves which
 * filter and in what order). Without a state: the live jobs, by queue, then in claim order.
 */
export async function listJobs(
  executor: Executor,
  tables: Tables,
  filter: JobFilter = {},
  page: JobPage = {},
): Promise<JobList> {
  rejectUnknownKeys('a page', page, JOB_PAGE_KEYS);
  const limit = integerIn('limit', page.limit ?? 50, 1, 1_000);
  let budget = integerIn('scanLimit', page.scanLimit ?? 5_000, 1, 100_000);
  const plan = planJobs(tables, validateJobFilter(filter));
  const after = page.after === undefined ? null : cursorOf(plan, page.after);
  const db = countStatements(executor);
  const spent = () => budget <= 0 || db.count >= MAX_STATEMENTS;
  const jobs: JobSummary[] = [];
  let chunk = limit + 1;
  for await (const segment of plan.segments(db, after?.segment)) {
    let key = after && after.key.length > 0 && sameSegment(after.segment, segment.id) ? after.key : null;
    budget -= 1; // opening a range is a seek
    for (;;) {
      const want = plan.residual ? Math.max(1, Math.min(chunk, budget)) : limit - jobs.length + 1;
      chunk = Math.min(RESIDUAL_CHUNK, chunk * 4);
      const rows = await db.select<SummaryRow>(sqlChunk(plan, segment, key !== null), [
        ...(plan.residual?.params ?? []),
        ...segment.params,
        ...(key === null ? [] : keysetParams(key)),
        want,
      ]);
      budget -= rows.length;
      for (const row of rows) {
        if (jobs.length === limit) return { jobs, next: nextAt(segment, key) };
        key = segment.keys.map((k) => row[k.field as keyof SummaryRow] as KeyValue);
        if (Number(row.matches) === 1) jobs.push(summaryOf(row));
      }
      if (rows.length < want) break;
      if (spent()) return { jobs, next: nextAt(segment, key) };
    }
    if (spent()) return { jobs, next: nextAt(segment, key) };
  }
  return { jobs, next: null };
}

/** The cursor `after` names, checked against the walk it will resume (OptionsError naming `after`). */
function cursorOf(plan: Plan, text: string): JobCursor {
  const cursor = decodeCursor(text);
  return checkCursor(cursor, plan.keysOf(cursor.segment), text);
}

/** The cursor after `key` in `segment` (an empty key: from the segment's start). */
function nextAt(segment: Segment, key: readonly KeyValue[] | null): string {
  return encodeCursor({ segment: segment.id, key: key ?? [] });
}

function sameSegment(a: readonly (string | number)[], b: readonly (string | number)[]): boolean {
  return a.length === b.length && a.every((v, i) => String(v) === String(b[i]));
}

interface SummaryRow {
  id: number | string;
  state: JobState;
  queue: string;
  name: string;
  priority: number;
  retry_times: number;
  max_retries: number | null;
  run_at: Date | null;
  lock_id: string | null;
  locked_at: Date | null;
  batch_id: number | string | null;
  created_at: Date;
  finished_at: Date | null;
  error: string | null;
  matches: number | string;
}

function summaryOf(row: SummaryRow): JobSummary {
  return {
    id: Number(row.id),
    state: row.state,
    queue: row.queue,
    name: row.name,
    priority: row.priority,
    retryTimes: row.retry_times,
    maxRetries: row.max_retries,
    runAt: shownRunAt(row.run_at),
    lockId: row.lock_id || null,
    lockedAt: row.locked_at,
    batchId: row.batch_id === null ? null : Number(row.batch_id),
    createdAt: row.created_at,
    finishedAt: row.finished_at,
    error: row.error || null,
  };
}
