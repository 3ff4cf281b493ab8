import { type CountingExecutor, countStatements } from '../db/countStatements.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { integerIn } from '../options.ts';
import { type JobFilter, validateJobFilter } from './jobFilter.ts';
import { planJobs } from './jobPlans.ts';
import { MAX_STATEMENTS, orderBy, type Plan, type Segment } from './Plan.ts';

/**
 * Params: for each branch, its residual params…, its range params…, ?limit. Per branch, in order
 * (`b`): how many rows of its range were read, at most `limit`, in index order (the LIMIT inside
 * bounds what is read; the ORDER BY makes the read walk the index — without it an open range may
 * be read as a table scan — and makes a capped count the count of the range's first rows); how
 * many of those pass its residual filter; and, when asked, how long ago its first row's first key
 * (a time) was, on the DB clock. A covering index read when there is no residual. One row per
 * branch, even an empty one: an aggregate without GROUP BY always returns one.
 */
const sqlCountBranches = (branches: readonly CountBranch[]) =>
  branches
    .map(
      (b, i) => `SELECT ${i} AS b, COUNT(*) AS examined, COALESCE(SUM(w.matches), 0) AS matched,
  ${b.age ? 'TIMESTAMPDIFF(MICROSECOND, MIN(w.k), NOW(3)) DIV 1000' : 'NULL'} AS age_ms
FROM (
  SELECT ${b.residual?.sql ?? 'TRUE'} AS matches${b.age ? `, ${b.segment.keys[0]?.sql} AS k` : ''}
  FROM ${b.segment.from}
  WHERE ${b.segment.where}
  ORDER BY ${orderBy(b.segment)}
  LIMIT ?
) w`,
    )
    .join('\nUNION ALL\n');

/**
 * Ranges counted per statement: 250, so the overview's 200 queues (five ranges each, more with
 * priorities) take four statements, not ten. Each branch is a short indexed range of its own limit.
 */
const BRANCHES_PER_STATEMENT = 250;

/** One range to count: a segment of a walk, the residual its rows must pass, and the most rows to read. */
export interface CountBranch {
  readonly segment: Segment;
  readonly residual: Plan['residual'];
  readonly limit: number;
  /** Also report how long ago the first row's first key was (the segment's first key must be a time). */
  readonly age?: boolean;
}

export interface BranchCount {
  /** Rows read (the branch's limit when its range holds at least that many). */
  readonly examined: number;
  /** Rows read that pass the residual. */
  readonly matched: number;
  readonly ageMs: number | null;
}

/**
 * The one bounded count read: ranges counted 250 per statement, each reading at most its own
 * limit of index entries. Counting jobs, a queue's depth and the dashboard's counts go through it.
 */
export async function countSegments(db: Executor, branches: readonly CountBranch[]): Promise<BranchCount[]> {
  const out: BranchCount[] = [];
  for (let i = 0; i < branches.length; i += BRANCHES_PER_STATEMENT) {
    const group = branches.slice(i, i + BRANCHES_PER_STATEMENT);
    const rows = await db.select<{
      b: number | string;
      examined: number | string;
      matched: number | string;
      age_ms: number | string | null;
    }>(
      sqlCountBranches(group),
      group.flatMap((b) => [...(b.residual?.params ?? []), ...b.segment.params, b.limit]),
    );
    const byBranch = new Map(rows.map((r) => [Number(r.b), r]));
    for (let b = 0; b < group.length; b++) {
      const row = byBranch.get(b);
      out.push({
        examined: Number(row?.examined ?? 0),
        matched: Number(row?.matched ?? 0),
        ageMs: row?.age_ms === null || row?.age_ms === undefined ? null : Number(row.age_ms),
      });
    }
  }
  return out;
}

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
 * listJobs (so a 10M-row table answers in the time `max` entries take, never a scan of the
 * table), in at most about 100 statements whatever the number of queues. The segments of one
 * queue or range are counted one by one, each with the budget left; a walk over every queue
 * counts its segments 250 per statement, sharing the budget (a segment that fills its share
 * is counted again alone: such a walk may read up to twice `max`).
 */
export async function countJobs(
  executor: Executor,
  tables: Tables,
  filter: JobFilter = {},
  options: { max?: number } = {},
): Promise<JobCount> {
  const max = integerIn('max', options.max ?? 10_000, 1, 1_000_000);
  const plan = planJobs(tables, validateJobFilter(filter));
  const db = countStatements(executor);
  const tally = new Tally(db, plan, max);
  const group = plan.wide ? BRANCHES_PER_STATEMENT : 1;
  const pending: Segment[] = [];
  for await (const segment of plan.segments(db)) {
    pending.push(segment);
    const full = pending.length === group;
    if (!full && db.count < MAX_STATEMENTS) continue;
    if (!(await tally.add(pending.splice(0))) || db.count >= MAX_STATEMENTS)
      return { count: tally.count, exact: false };
  }
  const complete = await tally.add(pending);
  return { count: tally.count, exact: complete };
}

/** A count in progress: what was matched so far and the index entries it may still read. */
class Tally {
  count = 0;
  #budget: number;

  constructor(
    private readonly db: CountingExecutor,
    private readonly plan: Plan,
    max: number,
  ) {
    this.#budget = max;
  }

  /**
   * Counts a group of segments in one statement, the budget shared among them; a segment that
   * fills its share is counted again alone with the whole budget left. False once the budget ran
   * out: then the count is of the walk's first rows, and later segments are left out.
   */
  async add(segments: readonly Segment[]): Promise<boolean> {
    if (segments.length === 0) return true;
    const residual = this.plan.residual;
    const share = Math.max(1, Math.floor(this.#budget / segments.length));
    const counts = await countSegments(
      this.db,
      segments.map((segment) => ({ segment, residual, limit: share })),
    );
    for (const [i, segment] of segments.entries()) {
      let counted = counts[i] as BranchCount;
      if (counted.examined >= share) {
        // Filled its share: more rows may follow. Count it alone with all the budget left, if any.
        if (this.#budget <= share || this.db.count >= MAX_STATEMENTS) return this.#stop(counted);
        [counted] = (await countSegments(this.db, [{ segment, residual, limit: this.#budget }])) as [BranchCount];
        if (counted.examined >= this.#budget) return this.#stop(counted);
      }
      this.count += counted.matched;
      this.#budget -= counted.examined;
      if (this.#budget <= 0) return false;
    }
    return true;
  }

  /** The budget ran out inside this segment: its matches count, and nothing after it does. */
  #stop(counted: BranchCount): false {
    this.count += counted.matched;
    this.#budget = 0;
    return false;
  }
}
