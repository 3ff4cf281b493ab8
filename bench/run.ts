/**
 * `npm run bench`: sluice against raw-SQL ceilings measured in the same run on the same server.
 *   (a) enqueue of one 100,000-job batch (enqueue.ts)
 *   (b) drain of 100,000 no-op jobs by 1, 2, 4 worker processes per claim strategy (drainSuite.ts)
 *   (c) drain of 10,000 due jobs with and without 1,000,000 delayed ones in the table (delayedBacklog.ts)
 *   (d) sluice next to BullMQ (Redis) and pg-boss (PostgreSQL): drains at each one's defaults and
 *       best setting, and pickup latency from another process into an idle consumer (peers.ts);
 *       a peer whose server does not answer is skipped, saying so
 * Progress goes to stderr; stdout gets the table and, as its last line, the result as JSON,
 * which is also written to bench/results/latest.json (kept out of git). The same report goes to
 * bench/RESULTS.md, which the README links and which is committed after a run: the figures in the
 * repository are the ones a run printed, never typed in by hand. Not a test: it asserts only that
 * every step did its work (all jobs written, all drained, every worker exited 0).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { openBench } from './benchDatabase.ts';
import { measureDelayedBacklog } from './delayedBacklog.ts';
import { measureDrains } from './drainSuite.ts';
import { measureEnqueue } from './enqueue.ts';
import { measurePeers, renderPeerReport, toPeerResult } from './peers.ts';
import { progress } from './progress.ts';
import { renderReport, toResult } from './report.ts';
import { makeJobs } from './workload.ts';

const JOB_COUNT = 100_000;
const ENQUEUE_RUNS = 3;
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const RESULTS_PAGE = fileURLToPath(new URL('./RESULTS.md', import.meta.url));

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
    const peers = await measurePeers();
    const result = { ...toResult(enqueue, drains, backlog), peers: toPeerResult(peers) };
    const wallSeconds = (performance.now() - started) / 1000;
    const report = [
      renderReport({ bench, jobCount: JOB_COUNT, loadAtStart, enqueue, drains, backlog, wallSeconds }),
      '',
      renderPeerReport(peers),
    ].join('\n');
    process.stdout.write(`${report}\n`);
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(`${RESULTS_DIR}latest.json`, `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(RESULTS_PAGE, resultsPage(report, result));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await bench.close();
  }
}

/** The committed page: when and how the figures were made, the report as printed, the JSON line. */
function resultsPage(report: string, result: unknown): string {
  return [
    '# sluice benchmark: the last run',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()} (${cpus().length} CPUs, node ${process.version}).`,
    'Compare ratios within one run: absolute rates on a shared machine drift by a fifth between runs.',
    '',
    '```text',
    report,
    '```',
    '',
    '```json',
    JSON.stringify(result, null, 2),
    '```',
    '',
  ].join('\n');
}

await main();
