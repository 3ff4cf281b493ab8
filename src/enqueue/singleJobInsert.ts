import type { PreparedWrite } from '../db/executePrepared.ts';
import type { Tables } from '../db/tables.ts';
import { rowPayload } from '../model/storedPayload.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import { columnsFor, insertJobsPrefix } from './jobInsert.ts';

/** How a job's run_at is given: at once, after a delay on the DB clock, or at a time. */
enum Due {
  Now = 0,
  Delayed = 1,
  At = 2,
}

const RUN_AT: Record<Due, string> = {
  [Due.Now]: 'NOW(3)',
  [Due.Delayed]: 'NOW(3) + INTERVAL ? MICROSECOND',
  [Due.At]: '?',
};

/** The texts made so far, per INSERT prefix (insertJobsPrefix's, one per install and set of columns). */
const texts = new Map<string, string[]>();

/**
 * Pure: one job's INSERT with its values apart (`?`), for the single enqueue's one-statement path
 * (enqueueJob.ts), which sends it prepared. The same row as insertJobsPrefix + renderJobTuple write
 * for a job outside any batch, group or workflow; its text depends only on the install's tables, the
 * optional columns the job names and how its run_at is given, never on a value: a few dozen texts
 * per install at most, each prepared once per connection.
 */
export function singleJobInsert(t: Tables, job: NormalizedJob): PreparedWrite {
  const columns = columnsFor([job], null);
  const prefix = insertJobsPrefix(t, columns);
  const due = job.runAt !== null ? Due.At : job.delayMs > 0 ? Due.Delayed : Due.Now;
  const values: unknown[] = [job.queue, job.name, rowPayload(job.storedPayload), job.priority];
  if (due === Due.At) values.push((job.runAt as Date).toISOString().slice(0, 23).replace('T', ' '));
  else if (due === Due.Delayed) values.push(job.delayMs * 1000);
  if (columns.maxRetries) values.push(job.maxRetries);
  if (columns.backoff) values.push(job.backoff);
  if (columns.idempotencyKey) values.push(job.idempotencyKey);
  if (columns.flags) values.push(0);
  if (columns.groupKey) values.push(job.group?.key ?? null);
  if (columns.trace) values.push(job.trace?.traceparent ?? null, job.trace?.tracestate ?? null);
  let built = texts.get(prefix);
  if (built === undefined) {
    built = [];
    texts.set(prefix, built);
  }
  let sql = built[due];
  if (sql === undefined) {
    const optional = values.length - (due === Due.Now ? 4 : 5);
    sql = `${prefix}(?,?,?,?,${RUN_AT[due]}${',?'.repeat(optional)})`;
    built[due] = sql;
  }
  return { sql, values };
}

/**
 * Pure: at most how long `statement` is as text once its values are escaped into it (each
 * string at most doubled, each other value at most 24 characters): what a server's packet limit is
 * checked against, for the prepared form as for the text it falls back to.
 */
export function escapedLengthAtMost(statement: PreparedWrite): number {
  let length = statement.sql.length;
  for (const value of statement.values) length += typeof value === 'string' ? 2 * value.length + 2 : 24;
  return length;
}
