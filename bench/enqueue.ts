/**
 * (a) Enqueue: one 100,000-job batch through `sluice.enqueueBatch` against the raw ceiling
 * (rawInsert.ts) writing the same jobs into an identical empty table, with as many rows per
 * statement as sluice's own run used (read from its `batch:enqueued` event; fewer where their JSON
 * passes 4 MiB). Tables are truncated before every run; sides alternate, sluice first; each side's
 * median counts.
 */
import type { EnqueueBatchResult } from 'sluice';
import { type Bench, truncate } from './benchDatabase.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { rawInsertJobs } from './rawInsert.ts';
import type { BenchJob } from './workload.ts';

export interface EnqueueMeasurement {
  readonly jobsPerSec: number;
  readonly rawJobsPerSec: number;
  readonly ratio: number;
  /** Multi-row INSERT statements sluice wrote per batch, and so rows per statement on both sides. */
  readonly statements: number;
  readonly rowsPerStatement: number;
  readonly sluiceSeconds: readonly number[];
  readonly rawSeconds: readonly number[];
}

export async function measureEnqueue(
  bench: Bench,
  jobs: readonly BenchJob[],
  runs: number,
): Promise<EnqueueMeasurement> {
  const sluiceSeconds: number[] = [];
  const rawSeconds: number[] = [];
  let statements = 0;
  for (let run = 1; run <= runs; run++) {
    const sluiceRun = await timeSluiceEnqueue(bench, jobs);
    statements = sluiceRun.chunks;
    sluiceSeconds.push(sluiceRun.seconds);
    rawSeconds.push(await timeRawEnqueue(bench, jobs, Math.ceil(jobs.length / statements)));
    progress(
      `enqueue run ${run}/${runs}: sluice ${sluiceRun.seconds.toFixed(2)} s, raw ${rawSeconds.at(-1)?.toFixed(2)} s`,
    );
  }
  const jobsPerSec = jobs.length / median(sluiceSeconds);
  const rawJobsPerSec = jobs.length / median(rawSeconds);
  return {
    jobsPerSec,
    rawJobsPerSec,
    ratio: jobsPerSec / rawJobsPerSec,
    statements,
    rowsPerStatement: Math.ceil(jobs.length / statements),
    sluiceSeconds,
    rawSeconds,
  };
}

async function timeSluiceEnqueue(
  bench: Bench,
  jobs: readonly BenchJob[],
): Promise<{ seconds: number; chunks: number }> {
  await truncate(bench.conn, [
    bench.tables.jobs,
    bench.tables.batches,
    bench.tables.jobTraces,
    bench.tables.jobPayloads,
  ]);
  let chunks = 0;
  const onEnqueued = (e: { chunks: number }) => (chunks = e.chunks);
  bench.sluice.events.on('batch:enqueued', onEnqueued);
  try {
    const started = performance.now();
    const result: EnqueueBatchResult = await bench.sluice.enqueueBatch(jobs);
    const seconds = (performance.now() - started) / 1000;
    if (result.count !== jobs.length) throw new Error(`sluice enqueued ${result.count} of ${jobs.length} jobs`);
    return { seconds, chunks };
  } finally {
    bench.sluice.events.off('batch:enqueued', onEnqueued);
  }
}

async function timeRawEnqueue(bench: Bench, jobs: readonly BenchJob[], rowsPerStatement: number): Promise<number> {
  await truncate(bench.conn, [bench.tables.raw]);
  const started = performance.now();
  const inserted = await rawInsertJobs(bench.conn, bench.tables.raw, jobs, rowsPerStatement);
  const seconds = (performance.now() - started) / 1000;
  if (inserted !== jobs.length) throw new Error(`raw insert wrote ${inserted} of ${jobs.length} rows`);
  return seconds;
}
