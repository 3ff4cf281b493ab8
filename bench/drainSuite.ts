/**
 * (b) Drain: 100,000 no-op jobs emptied by 1, 2 and 4 worker processes, for each claim strategy,
 * with sluice at three settings: concurrency 50 (claims of up to 50: like for like with the raw
 * loop), 200 and 500 (claims of up to 200 and 500: what one claimer per process filling all its
 * free slots buys). Each row pairs a sluice
 * drain (real `sluice work` processes, default options otherwise: job history on) with the raw
 * ceiling measured right after it with the same number of processes (rawWorker.ts: plain mysql2,
 * 50 jobs per claim, no history) on an identical table filled with the same rows.
 */
import { fileURLToPath } from 'node:url';
import type { ClaimStrategy } from 'sluice';
import { type Bench, truncate } from './benchDatabase.ts';
import { type DrainMeasurement, measureDrain } from './drain.ts';
import { progress } from './progress.ts';
import { rawInsertJobs } from './rawInsert.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE, type BenchJob } from './workload.ts';

export const STRATEGIES: readonly ClaimStrategy[] = ['random-head', 'skip-locked'];
export const WORKER_COUNTS: readonly number[] = [1, 2, 4];
/** Per sluice worker process; each setting also sets the largest claim (--claim-batch-size). */
export const CONCURRENCIES: readonly number[] = [50, 200, 500];
/** Jobs per claim of the raw loop: the claims of sluice's c50 rows (--claim-batch-size 50). */
export const RAW_BATCH = 50;

const JOBS_DIR = fileURLToPath(new URL('./jobs', import.meta.url));
const RAW_WORKER = fileURLToPath(new URL('./rawWorker.ts', import.meta.url));

export interface DrainRow {
  readonly strategy: ClaimStrategy;
  readonly workers: number;
  readonly concurrency: number;
  readonly sluice: DrainMeasurement;
  readonly raw: DrainMeasurement;
}

export async function measureDrains(
  bench: Bench,
  jobs: readonly BenchJob[],
  rowsPerStatement: number,
): Promise<DrainRow[]> {
  const rows: DrainRow[] = [];
  for (const concurrency of CONCURRENCIES) {
    for (const strategy of STRATEGIES) {
      for (const workers of WORKER_COUNTS) {
        const sluice = await drainSluice(bench, jobs, strategy, workers, concurrency);
        const raw = await drainRaw(bench, jobs, workers, rowsPerStatement);
        progress(
          `drain ${strategy} ×${workers} c${concurrency}: sluice ${Math.round(sluice.jobsPerSec)} jobs/s, raw ${Math.round(raw.jobsPerSec)} jobs/s`,
        );
        rows.push({ strategy, workers, concurrency, sluice, raw });
      }
    }
  }
  return rows;
}

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
