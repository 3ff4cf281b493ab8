/**
 * `npm run bench -- queues` (a few minutes): one `sluice work` process (concurrency 50) drains
 * JOBS no-op jobs spread evenly over 1 queue, 100 queues and 1,000 queues (named on the command
 * line), and over the 1,000 again through a pattern (`q-*`) and through `*`. It reports each
 * shape's jobs/s (median of TIMED_RUNS drains, after one untimed; the shapes in turn, round after
 * round) and its ratio to the one-queue drain. The clock starts when the worker is ready and stops when the table holds no job.
 * Before every drain the jobs table's dirty pages are written out (FLUSH TABLES … FOR EXPORT),
 * as bench backlog does, so the rates measure the claim and not the server digesting the fill.
 */
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2/promise';
import { type Bench, openBench, truncate } from './benchDatabase.ts';
import { median } from './median.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { fmt } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { JOB_NAME } from './workload.ts';

const JOBS = 20_000;
const TIMED_RUNS = 5;
const LIMIT_MS = 60_000;
const JOBS_DIR = fileURLToPath(new URL('./jobs', import.meta.url));

interface Shape {
  readonly label: string;
  /** How many queues the jobs are spread over (q-0000 …). */
  readonly queues: number;
  /** The worker's --queues. */
  readonly subscription: (names: readonly string[]) => string;
}

const SHAPES: readonly Shape[] = [
  { label: '1 queue', queues: 1, subscription: (n) => n.join(',') },
  { label: '100 queues (names)', queues: 100, subscription: (n) => n.join(',') },
  { label: '1,000 queues (names)', queues: 1_000, subscription: (n) => n.join(',') },
  { label: "1,000 queues ('q-*')", queues: 1_000, subscription: () => 'q-*' },
  { label: "1,000 queues ('*')", queues: 1_000, subscription: () => '*' },
];

interface ShapeResult {
  readonly label: string;
  readonly jobsPerSec: number;
  readonly ratio: number;
  readonly runs: readonly number[];
}

const queueNames = (n: number) => Array.from({ length: n }, (_, i) => `q-${String(i).padStart(4, '0')}`);

async function measureShapes(bench: Bench): Promise<ShapeResult[]> {
  const runs = SHAPES.map(() => [] as number[]);
  // Untimed drains first, then the shapes in turn, round after round: load that comes and goes on
  // the host (other processes) falls on every shape alike, and the ratios stay comparable.
  for (let round = 0; round <= TIMED_RUNS; round++) {
    for (const [i, shape] of SHAPES.entries()) {
      await truncate(bench.conn, [bench.tables.jobs, bench.tables.batches, bench.tables.jobHistory]);
      const rate = await drain(bench, shape);
      if (round === 0) continue;
      runs[i]?.push(rate);
      progress(`  ${shape.label}: round ${round}/${TIMED_RUNS} ${Math.round(rate)} jobs/s`);
    }
  }
  const base = median(runs[0] as number[]);
  return SHAPES.map((shape, i) => {
    const jobsPerSec = median(runs[i] as number[]);
    return { label: shape.label, jobsPerSec, ratio: jobsPerSec / base, runs: runs[i] as number[] };
  });
}

/** Fills the table with JOBS jobs over the shape's queues, and times one worker draining them: jobs/s. */
async function drain(bench: Bench, shape: Shape): Promise<number> {
  const names = queueNames(shape.queues);
  await bench.sluice.enqueueBatch(
    Array.from({ length: JOBS }, (_, n) => ({
      name: JOB_NAME,
      queue: names[n % names.length] as string,
      payload: { n },
    })),
  );
  await bench.conn.query(`FLUSH TABLES \`${bench.tables.jobs}\` FOR EXPORT`);
  await bench.conn.query('UNLOCK TABLES');
  const args = [
    ...SLUICE_CLI,
    'work',
    '--queues',
    shape.subscription(names),
    '--concurrency',
    '50',
    '--jobs',
    JOBS_DIR,
    '--prefix',
    bench.prefix,
  ];
  const fleet = await startFleet(1, ['--import', 'tsx', ...args], { LOG_LEVEL: 'warn', MYSQL_URL: bench.url });
  return measureWithFleet(fleet, shape.label, async () => {
    const initial = await jobsLeft(bench);
    let left = initial;
    while (left > 0 && performance.now() - fleet.readyAt < LIMIT_MS) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      left = await jobsLeft(bench);
    }
    if (left > 0) throw new Error(`${shape.label}: ${left} jobs still left after ${LIMIT_MS / 1000} s`);
    return initial / ((performance.now() - fleet.readyAt) / 1000);
  });
}

async function jobsLeft(bench: Bench): Promise<number> {
  const [rows] = await bench.conn.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM \`${bench.tables.jobs}\``);
  return Number(rows[0]?.n);
}

function render(results: readonly ShapeResult[]): string {
  return [
    `drain ${fmt(JOBS)} no-op jobs spread over N queues (1 worker process, concurrency 50; medians of ${TIMED_RUNS})`,
    ...results.map(
      (r) =>
        `    ${r.label.padEnd(24)} ${fmt(r.jobsPerSec).padStart(7)} jobs/s   ${r.ratio.toFixed(2)}× one queue   runs ${r.runs.map(fmt).join(' / ')}`,
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  const bench = await openBench();
  try {
    const results = await measureShapes(bench);
    const json = results.map((r) => ({
      ...r,
      jobsPerSec: Math.round(r.jobsPerSec),
      ratio: Math.round(r.ratio * 100) / 100,
      runs: r.runs.map(Math.round),
    }));
    process.stdout.write(`${render(results)}\n${JSON.stringify({ manyQueues: json })}\n`);
  } finally {
    await bench.close();
  }
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
