/**
 * `npm run bench -- backlog` (a few minutes): one `sluice work` process drains 10,000 due jobs, from a table that holds
 * only them and from a table that also holds 1,000,000 delayed (not yet due) jobs of the same
 * queue, spread over three priorities — two of them better than the due jobs'. The ratio (with
 * backlog / without, medians of TIMED_RUNS drains each) says whether the backlog slows the claim
 * of due work: 1.0 means not at all. The clock starts when the worker is ready and stops when no
 * due job is left.
 *
 * Settling, so the ratio measures the claim path and not the server digesting the last bulk
 * write: each side first runs one drain untimed; before every drain the jobs table's dirty pages
 * are written out (FLUSH TABLES … FOR EXPORT). Without that, the first drains after the
 * 1,000,000-row load ran 0.83–0.87× while InnoDB flushed the load in the background, and the
 * fourth ran 1.0× (MariaDB 10.11, 128 MB buffer pool). The first drain after the load is still
 * reported (`firstAfterLoad`), so that cost stays visible.
 */
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2/promise';
import { type Bench, openBench, truncate } from './benchDatabase.ts';
import { median } from './median.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { fmt } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE, JOB_NAME } from './workload.ts';

const DUE = 10_000;
const DELAYED = 1_000_000;
const DELAYED_PER_BATCH = 100_000;
const TIMED_RUNS = 5;
const LIMIT_MS = 60_000;
const JOBS_DIR = fileURLToPath(new URL('./jobs', import.meta.url));

export interface BacklogMeasurement {
  readonly dueJobs: number;
  readonly delayedJobs: number;
  /** Medians of the timed runs. */
  readonly jobsPerSecWithout: number;
  readonly jobsPerSecWith: number;
  readonly ratio: number;
  readonly runsWithout: readonly number[];
  readonly runsWith: readonly number[];
  /** The untimed warm-up drain right after the 1,000,000-row load, for the record. */
  readonly firstAfterLoad: number;
}

export async function measureDelayedBacklog(bench: Bench): Promise<BacklogMeasurement> {
  await truncate(bench.conn, [
    bench.tables.jobs,
    bench.tables.batches,
    bench.tables.jobHistory,
    bench.tables.jobTraces,
  ]);
  await drainDue(bench);
  const runsWithout = await timedDrains(bench, 'without backlog');
  await loadBacklog(bench);
  const firstAfterLoad = await drainDue(bench);
  progress(`  delayed backlog: first drain after the load (untimed warm-up) ${Math.round(firstAfterLoad)} jobs/s`);
  const runsWith = await timedDrains(bench, 'with backlog');
  const jobsPerSecWithout = median(runsWithout);
  const jobsPerSecWith = median(runsWith);
  progress(
    `delayed backlog: ${Math.round(jobsPerSecWithout)} jobs/s without, ${Math.round(jobsPerSecWith)} jobs/s with ${DELAYED.toLocaleString('en-US')} delayed`,
  );
  return {
    dueJobs: DUE,
    delayedJobs: DELAYED,
    jobsPerSecWithout,
    jobsPerSecWith,
    ratio: jobsPerSecWith / jobsPerSecWithout,
    runsWithout,
    runsWith,
    firstAfterLoad,
  };
}

async function timedDrains(bench: Bench, label: string): Promise<number[]> {
  const runs: number[] = [];
  for (let run = 1; run <= TIMED_RUNS; run++) {
    runs.push(await drainDue(bench));
    progress(`  delayed backlog, ${label}: run ${run}/${TIMED_RUNS} ${Math.round(runs.at(-1) as number)} jobs/s`);
  }
  return runs;
}

async function loadBacklog(bench: Bench): Promise<void> {
  for (let done = 0; done < DELAYED; done += DELAYED_PER_BATCH) {
    const batch = Array.from({ length: DELAYED_PER_BATCH }, (_, i) => ({
      name: JOB_NAME,
      queue: BENCH_QUEUE,
      priority: (done + i) % 3,
      delayMs: 86_400_000,
    }));
    await bench.sluice.enqueueBatch(batch);
    progress(`  delayed backlog: ${(done + DELAYED_PER_BATCH).toLocaleString('en-US')} delayed jobs written`);
  }
  await bench.conn.query(`ANALYZE TABLE \`${bench.tables.jobs}\``);
}

/** Enqueues DUE due jobs, settles the table, and times one worker draining them: jobs/s. */
async function drainDue(bench: Bench): Promise<number> {
  await bench.sluice.enqueueBatch(
    Array.from({ length: DUE }, (_, n) => ({ name: JOB_NAME, queue: BENCH_QUEUE, priority: 2, payload: { n } })),
  );
  await bench.conn.query(`FLUSH TABLES \`${bench.tables.jobs}\` FOR EXPORT`);
  await bench.conn.query('UNLOCK TABLES');
  const args = [
    ...SLUICE_CLI,
    'work',
    '--queues',
    BENCH_QUEUE,
    '--concurrency',
    '50',
    '--jobs',
    JOBS_DIR,
    '--prefix',
    bench.prefix,
  ];
  const fleet = await startFleet(1, ['--import', 'tsx', ...args], { LOG_LEVEL: 'warn', MYSQL_URL: bench.url });
  return measureWithFleet(fleet, 'delayed backlog', async () => {
    const initial = await dueLeft(bench);
    let left = initial;
    while (left > 0 && performance.now() - fleet.readyAt < LIMIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await dueLeft(bench);
    }
    if (left > 0) throw new Error(`delayed backlog: ${left} due jobs still left after ${LIMIT_MS / 1000} s`);
    return initial / ((performance.now() - fleet.readyAt) / 1000);
  });
}

/**
 * Params: ?1 queue, ?2 queue. Due jobs not yet finished: free ones by bounded ix_head ranges
 * (one per priority) plus claimed ones by ix_head's claimed range. A plain `queue = ? AND run_at <= NOW(3)` count would
 * walk the whole million-row backlog every 50 ms and measure the probe instead of the worker.
 */
const SQL_DUE_LEFT = (table: string) => `
SELECT (SELECT COUNT(*) FROM \`${table}\` WHERE queue = ? AND lock_id = '' AND priority IN (0, 1, 2) AND run_at <= NOW(3))
     + (SELECT COUNT(*) FROM \`${table}\` WHERE queue = ? AND lock_id > '') AS n`;

async function dueLeft(bench: Bench): Promise<number> {
  const [rows] = await bench.conn.query<RowDataPacket[]>(SQL_DUE_LEFT(bench.tables.jobs), [BENCH_QUEUE, BENCH_QUEUE]);
  return Number(rows[0]?.n);
}

export function renderBacklog(b: BacklogMeasurement): string {
  return [
    `drain ${fmt(b.dueJobs)} due jobs (1 worker, concurrency 50) with and without ${fmt(b.delayedJobs)} delayed jobs in the same queue`,
    `    without backlog ${fmt(b.jobsPerSecWithout)} jobs/s   with backlog ${fmt(b.jobsPerSecWith)} jobs/s   ratio ${b.ratio.toFixed(2)}   (medians)`,
    `    timed runs without: ${b.runsWithout.map(fmt).join(' / ')}   with: ${b.runsWith.map(fmt).join(' / ')}`,
    `    first drain right after writing the backlog (untimed warm-up; InnoDB still flushing the load): ${fmt(b.firstAfterLoad)} jobs/s`,
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await openBench();
  try {
    const b = await measureDelayedBacklog(bench);
    const result = {
      ...b,
      jobsPerSecWithout: Math.round(b.jobsPerSecWithout),
      jobsPerSecWith: Math.round(b.jobsPerSecWith),
      ratio: Math.round(b.ratio * 100) / 100,
      runsWithout: b.runsWithout.map(Math.round),
      runsWith: b.runsWith.map(Math.round),
      firstAfterLoad: Math.round(b.firstAfterLoad),
    };
    process.stdout.write(`${renderBacklog(b)}\n${JSON.stringify({ delayedBacklog: result })}\n`);
  } finally {
    await bench.close();
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
