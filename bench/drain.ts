/**
 * One timed drain: N child processes empty a filled queue table. The clock starts when the last
 * child says 'ready' (children start claiming as soon as they are up, as `sluice work` does, so
 * the jobs the early ones finished before then are subtracted: the rate is the jobs left at that
 * moment over the time until the table holds none). A drain still running after DRAIN_LIMIT_MS
 * is cut off there, so a slow build cannot blow the run's time budget: its rate is then the jobs
 * drained within the limit over the limit, and `left` says how many remained. Then SIGINT, and
 * every child must exit 0.
 * Each child runs with the statement-counting preload; the drain reports what they sent.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Connection, RowDataPacket } from 'mysql2/promise';
import { otelEnabled } from './otelSdk.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { quietHost } from './quietHost.ts';
import { type StatementCounts, sumStatementCounts } from './statementCounter.ts';

export interface DrainTarget {
  /** For progress lines, e.g. "random-head ×2 sluice". */
  readonly label: string;
  /** The live jobs table the children drain. */
  readonly table: string;
  readonly queue: string;
  readonly workers: number;
  /** node arguments of one child, after the preloads. */
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
}

export interface DrainMeasurement {
  /** Jobs drained inside the timed window. */
  readonly jobs: number;
  /** Jobs still in the table when the window closed: 0, unless the drain hit DRAIN_LIMIT_MS. */
  readonly left: number;
  /** Jobs finished before the last child was ready (outside the window). */
  readonly startedEarly: number;
  readonly seconds: number;
  readonly jobsPerSec: number;
  /** Statements the children sent over the whole drain (start-up included), by first keyword. */
  readonly statements: StatementCounts;
}

const PRELOADS = [
  '--import',
  'tsx',
  '--import',
  new URL('./statementCounter.ts', import.meta.url).pathname,
  // BENCH_OTEL=1: the workers register the same no-export SDK as the bench process.
  ...(otelEnabled ? ['--import', new URL('./otelSdk.ts', import.meta.url).pathname] : []),
];

const POLL_INTERVAL_MS = 20;
const PROGRESS_INTERVAL_MS = 5_000;
const DRAIN_LIMIT_MS = 45_000;

export async function measureDrain(conn: Connection, target: DrainTarget, filled: number): Promise<DrainMeasurement> {
  const statementsDir = mkdtempSync(join(tmpdir(), 'sluice-bench-'));
  try {
    const env = { ...target.env, BENCH_STATEMENTS_DIR: statementsDir };
    // The previous drain's background work (InnoDB purging what it deleted) stays out of this one.
    await quietHost(target.label);
    const fleet = await startFleet(target.workers, [...PRELOADS, ...target.args], env);
    const timed = await measureWithFleet(fleet, target.label, () => timeDrain(conn, target, fleet.readyAt, filled));
    const files = readdirSync(statementsDir).map((f) => join(statementsDir, f));
    return { ...timed, statements: sumStatementCounts(files) };
  } finally {
    rmSync(statementsDir, { recursive: true, force: true });
  }
}

async function timeDrain(conn: Connection, target: DrainTarget, readyAt: number, filled: number) {
  const initial = await countJobs(conn, target);
  const { endAt, left } = await waitUntilEmpty(conn, target, readyAt, initial);
  const seconds = (endAt - readyAt) / 1000;
  if (left > 0)
    progress(
      `  ${target.label}: cut off after ${DRAIN_LIMIT_MS / 1000} s with ${left.toLocaleString('en-US')} jobs left`,
    );
  return {
    jobs: initial - left,
    left,
    startedEarly: filled - initial,
    seconds,
    jobsPerSec: (initial - left) / seconds,
  };
}

/** Params: ?1 queue. Jobs still in the live table for the queue (walks them all: progress lines only). */
const sqlCount = (table: string) => `
SELECT COUNT(*) AS n
FROM \`${table}\`
WHERE queue = ?`;

/**
 * Params: ?1 queue. 1 while any job of the queue is left, else nothing: one index seek, so the
 * probe every POLL_INTERVAL_MS costs the server next to nothing (a COUNT(*) over 100,000 rows
 * 20 times a second would take CPU from the drain it measures).
 */
const sqlAnyLeft = (table: string) => `
SELECT 1 AS one
FROM \`${table}\`
WHERE queue = ?
LIMIT 1`;

async function countJobs(conn: Connection, target: DrainTarget): Promise<number> {
  const [rows] = await conn.query<RowDataPacket[]>(sqlCount(target.table), [target.queue]);
  return Number(rows[0]?.n);
}

async function anyLeft(conn: Connection, target: DrainTarget): Promise<boolean> {
  const [rows] = await conn.query<RowDataPacket[]>(sqlAnyLeft(target.table), [target.queue]);
  return rows.length > 0;
}

/**
 * Probes every POLL_INTERVAL_MS until the queue is empty or DRAIN_LIMIT_MS has passed (counting
 * only for a progress line every PROGRESS_INTERVAL_MS, and once when cut off). Returns when the
 * last probe was sent (an empty table emptied between the two last probes) and the jobs left.
 */
async function waitUntilEmpty(conn: Connection, target: DrainTarget, startedAt: number, initial: number) {
  let sentAt = performance.now();
  let lastProgress = sentAt;
  let left = true;
  while (left && sentAt - startedAt < DRAIN_LIMIT_MS) {
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    sentAt = performance.now();
    left = await anyLeft(conn, target);
    if (left && performance.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
      const count = await countJobs(conn, target);
      lastProgress = performance.now();
      const rate = Math.round((initial - count) / ((lastProgress - startedAt) / 1000));
      progress(`  ${target.label}: ${count.toLocaleString('en-US')} left, ${rate.toLocaleString('en-US')} jobs/s`);
    }
  }
  return { endAt: sentAt, left: left ? await countJobs(conn, target) : 0 };
}
