import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { shownPayload } from '../model/storedPayload.ts';
import { integerIn, optionKeys } from '../options.ts';
import type { JobFilter } from './jobFilter.ts';
import { type JobSummary, listJobs } from './listJobs.ts';

/** What to look for: jobs of a filter whose payload has `path` equal to `equals`. */
export interface JobSearch {
  /** A payload field as a dotted path (`customer.id`; at most 8 names), compared as text with `equals`. */
  readonly path: string;
  readonly equals: string;
  /** For a payload search: how many jobs of the filter one call reads (1–1,000). @defaultValue 500 */
  readonly scan?: number;
  /** For a payload search: the cursor a previous call returned (`next`). */
  readonly after?: string;
}

export const JOB_SEARCH_KEYS = optionKeys<JobSearch>({ path: true, equals: true, scan: true, after: true });

export interface JobSearchResult {
  readonly jobs: JobSummary[];
  /** How many jobs of the filter this call read. */
  readonly read: number;
  /** Payloads larger than 64 KiB, not searched (their jobs are not in `jobs`). */
  readonly skipped: number;
  /** Where the next call reads on (null when the filter has no more jobs). */
  readonly next: string | null;
}

/**
 * Params: ?1 max bytes, ?2 ids. The payloads of some jobs of one table, by primary key (a payload
 * stored apart joins by its primary key); one larger than the bound comes back NULL with its size.
 */
const sqlPayloads = (table: string, id: string, t: Tables) => `
SELECT x.${id} AS id, LENGTH(COALESCE(jp.payload, x.payload)) AS bytes,
       IF(LENGTH(COALESCE(jp.payload, x.payload)) <= ?, x.payload, NULL) AS payload,
       IF(LENGTH(COALESCE(jp.payload, x.payload)) <= ?, jp.payload, NULL) AS apart
FROM ${table} x
LEFT JOIN ${t.jobPayloads} jp ON jp.job_id = x.${id} AND x.payload = ''
WHERE x.${id} IN (?)`;

/** The largest payload a search reads and parses. */
const MAX_PAYLOAD_BYTES = 64 * 1024;

/**
 * Finds jobs of a filter by a payload field. No index can serve it (a payload is opaque to the
 * database, and may be packed or stored apart), so each call reads one page of `scan` jobs of the
 * filter (one bounded jobs.list) and their payloads, one statement per table, each payload up to
 * 64 KiB; pass `next` as `after` to read on. The cost is the filter's: narrow it by queue, name,
 * state and time.
 */
export async function searchJobs(
  db: Executor,
  tables: Tables,
  filter: JobFilter,
  search: JobSearch,
): Promise<JobSearchResult> {
  if (typeof search.path !== 'string' || typeof search.equals !== 'string')
    throw new OptionsError('search', 'needs a payload path and the text its value equals');
  const path = pathOf(search.path);
  const scan = integerIn('scan', search.scan ?? 500, 1, 1_000);
  const page = await listJobs(db, tables, filter, { limit: scan, after: search.after });
  const byTable = new Map<string, number[]>();
  for (const job of page.jobs) {
    const table =
      job.state === 'dead' ? 'dead' : job.state === 'completed' || job.state === 'cancelled' ? 'history' : 'live';
    byTable.set(table, [...(byTable.get(table) ?? []), job.id]);
  }
  const matched = new Set<number>();
  let skipped = 0;
  for (const [table, ids] of byTable) {
    const [name, id] =
      table === 'live'
        ? [tables.jobs, 'id']
        : table === 'history'
          ? [tables.jobHistory, 'job_id']
          : [tables.deadJobs, 'id'];
    const rows = await db.select<{ id: number | string; bytes: number; payload: string | null; apart: string | null }>(
      sqlPayloads(name, id, tables),
      [MAX_PAYLOAD_BYTES, MAX_PAYLOAD_BYTES, ids],
    );
    for (const row of rows) {
      if (row.payload === null) {
        skipped++;
        continue;
      }
      const shown = row.apart === null ? shownPayload(row.payload, 'row') : shownPayload(row.apart, 'apart');
      if (shown.refused === null && fieldEquals(shown.payload, path, search.equals)) matched.add(Number(row.id));
    }
  }
  return { jobs: page.jobs.filter((j) => matched.has(j.id)), read: page.jobs.length, skipped, next: page.next };
}

/** Pure: a dotted path as its names, or OptionsError. */
function pathOf(path: string): string[] {
  const names = path.split('.');
  if (names.length > 8 || names.some((n) => !/^[\w$-]{1,64}$/.test(n)))
    throw new OptionsError('path', `must be field names joined by dots, at most 8 (got ${JSON.stringify(path)})`);
  return names;
}

/** Pure: whether the value at `path` of a parsed payload, as text, is `equals`. */
function fieldEquals(payload: unknown, path: readonly string[], equals: string): boolean {
  let value: unknown = payload;
  for (const name of path) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, name)) return false;
    value = (value as Record<string, unknown>)[name];
  }
  if (typeof value === 'string') return value === equals;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value) === equals;
  return false;
}
