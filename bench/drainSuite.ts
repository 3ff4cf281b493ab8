/**
 * One drain of `npm run bench -- ratios`, each side in real processes with its statements counted
 * client-side (drain.ts): sluice (`sluice work` processes at a claim strategy and concurrency,
 * claims of up to <concurrency> jobs, default options otherwise: job history on) and the raw
 * ceiling (rawWorker.ts: plain mysql2, RAW_BATCH jobs per claim, no history) on an identical table
 * filled with the same rows.
 */
import { fileURLToPath } from 'node:url';
import type { ClaimStrategy } from 'sluice';
import { type Bench, truncate } from './benchDatabase.ts';
import { type DrainMeasurement, measureDrain } from './drain.ts';
import { rawInsertJobs } from './rawInsert.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE, type BenchJob } from './workload.ts';

/** Jobs per claim of the raw loop: the claims of sluice's c50 drain (--claim-batch-size 50). */
const RAW_BATCH = 50;

const JOBS_DIR = fileURLToPath(new URL('./jobs', import.meta.url));
const RAW_WORKER = fileURLToPath(new URL('./rawWorker.ts', import.meta.url));

export async function drainSluice(
  bench: Bench,
  jobs: readonly BenchJob[],
  strategy: ClaimStrategy,
  workers: number,
  concurrency: number,
): Promise<DrainMeasurement> {
  await truncate(bench.conn, [
    bench.tables.jobs,
    bench.tables.batches,
    bench.tables.jobHistory,
    bench.tables.jobTraces,
  ]);
  await bench.sluice.enqueueBatch(jobs);
  const args = [
    ...SLUICE_CLI,
    'work',
    '--queues',
    BENCH_QUEUE,
    '--concurrency',
    String(concurrency),
    '--claim-batch-size',
    String(concurrency),
    '--jobs',
    JOBS_DIR,
  ];
  args.push('--claim', strategy, '--prefix', bench.prefix);
  const target = {
    label: `${strategy} ×${workers} c${concurrency} sluice`,
    table: bench.tables.jobs,
    queue: BENCH_QUEUE,
    workers,
    args,
    env: { LOG_LEVEL: 'warn', MYSQL_URL: bench.url },
  };
  return measureDrain(bench.conn, target, jobs.length);
}

export async function drainRaw(
  bench: Bench,
  jobs: readonly BenchJob[],
  workers: number,
  rowsPerStatement: number,
): Promise<DrainMeasurement> {
  await truncate(bench.conn, [bench.tables.raw]);
  await rawInsertJobs(bench.conn, bench.tables.raw, jobs, rowsPerStatement);
  const args = [RAW_WORKER, '--table', bench.tables.raw, '--queue', BENCH_QUEUE, '--batch', String(RAW_BATCH)];
  const target = {
    label: `raw ×${workers}`,
    table: bench.tables.raw,
    queue: BENCH_QUEUE,
    workers,
    args,
    env: { MYSQL_URL: bench.url },
  };
  return measureDrain(bench.conn, target, jobs.length);
}
