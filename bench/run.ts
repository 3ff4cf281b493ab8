/**
 * `npm run bench`: sluice against raw-SQL ceilings measured in the same run on the same server.
 *   (a) enqueue of one 100,000-job batch (enqueue.ts)
 *   (b) drain of 100,000 no-op jobs by 1, 2, 4 worker processes per claim strategy (drainSuite.ts)
 *   (c) drain of 10,000 due jobs with and without 1,000,000 delayed ones in the table (delayedBacklog.ts)
 * Progress goes to stderr; stdout gets the table and, as its last line, the result as JSON,
 * which is also written to bench/results/latest.json. Not a test: it asserts only that every
 * step did its work (all jobs written, all drained, every worker exited 0).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { openBench } from './benchDatabase.ts';
import { measureDelayedBacklog } from './delayedBacklog.ts';
import { measureDrains } from './drainSuite.ts';
import { measureEnqueue } from './enqueue.ts';
import { progress } from './progress.ts';
import { renderReport, toResult } from './report.ts';
import { makeJobs } from './workload.ts';

const JOB_COUNT = 100_000;
const ENQUEUE_RUNS = 3;
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const bench = await openBench();
  try {
    progress(`database ready: ${bench.server.version}, max_allowed_packet ${bench.server.maxAllowedPacket}`);
    const jobs = makeJobs(JOB_COUNT);
    const enqueue = await measureEnqueue(bench, jobs, ENQUEUE_RUNS);
    const drains = await measureDrains(bench, jobs, enqueue.rowsPerStatement);
    const backlog = await measureDelayedBacklog(bench);
    const result = toResult(enqueue, drains, backlog);
    const wallSeconds = (performance.now() - started) / 1000;
    process.stdout.write(`${renderReport({ bench, jobCount: JOB_COUNT, loadAtStart, enqueue, drains, backlog, wallSeconds })}\n`);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(`${RESULTS_DIR}latest.json`, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await bench.close();
  }
}

await main();
