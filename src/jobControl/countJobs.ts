import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';
import { type JobFilter, validateJobFilter } from './jobFilter.ts';
import { orderBy, type Plan, planJobs, type Segment } from './jobPlans.ts';

/**
 * Params: residual params…, the segment's range params…, ?limit. Counts one segment's rows, at
 * most `limit` of them, read in index order (the LIMIT inside bounds what is read; the ORDER BY
 * makes the read walk the index — without it an open range may be read as a table scan — and
 * makes a capped count the count of the first rows of the listing), and how many of those pass
 * the residual filter. A covering index read when there is no residual.
 */
const sqlCountSegment = (plan: Plan, segment: Segment) => `
SELECT COUNT(*) AS examined, COALESCE(SUM(w.matches), 0) AS matched
FROM (
  SELECT ${plan.residual?.sql ?? 'TRUE'} AS matches
  FROM ${segment.from}
  WHERE ${segment.where}
  ORDER BY ${orderBy(segment)}
  LIMIT ?
) w`;

export interface JobCount {
  /** Jobs matching, among the index entries read. */
  readonly count: number;
  /**
   * True when every candidate was read (count is exact); false when the bound was reached: then
   * there are at least `count` (shown as "count+", as Mission Control caps at 500k).
   */
  readonly exact: boolean;
}

/**
 * How many jobs match `filter`, reading at most `max` index entries through the same walk as
 * listJobs (so a 10M-row table answers in the time `max` entries take, never a scan of the table).
 */
export async function countJobs(
  db: Executor,
  tables: Tables,
  filter: JobFilter = {},
  options: { max?: number } = {},
): Promise<JobCount> {
  const max = integerIn('max', options.max ?? 10_000, 1, 1_000_000);
  const plan = planJobs(tables, validateJobFilter(filter));
  let count = 0;
  let budget = max;
  for await (const segment of plan.segments(db)) {
    const [row] = await db.select<{ examined: number | string; matched: number | string }>(
      sqlCountSegment(plan, segment),
      [...(plan.residual?.params ?? []), ...segment.params, budget],
    );
    count += Number(row?.matched ?? 0);
    budget -= Number(row?.examined ?? 0);
    if (budget <= 0) return { count, exact: false };
  }
  return { count, exact: true };
}
