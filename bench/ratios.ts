/**
 * `npm run bench -- ratios`: the two ratios of `npm run bench` that a change to the enqueue or the
 * drain path must keep, in a few minutes instead of twenty: (a) the enqueue of one 100,000-job
 * batch against raw INSERTs (median of 3 each, as in run.ts), and (b) two drain rows of the suite,
 * one `sluice work` process (random-head) at concurrency 50 and 500, each against its paired raw
 * loop, with the statements per 50 jobs the workers sent (a count the machine's load does not
 * blur). Writes no RESULTS.md: `npm run bench` stays the report of record.
 *
 * With BENCH_OTEL=1 an OpenTelemetry SDK that records every span and exports none is registered in
 * this process and in every worker (otelSdk.ts): what tracing costs when an application turns it on.
 */
import { cpus, loadavg } from 'node:os';
import { openBench } from './benchDatabase.ts';
import { drainRaw, drainSluice } from './drainSuite.ts';
import { measureEnqueue } from './enqueue.ts';
import { otelEnabled } from './otelSdk.ts';
import { progress } from './progress.ts';
import { fmt, statementsPer50, table } from './report.ts';
import { makeJobs } from './workload.ts';

const JOB_COUNT = 100_000;
const ENQUEUE_RUNS = 3;
const CONCURRENCIES = [50, 500] as const;

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const bench = await openBench();
  try {
    const jobs = makeJobs(JOB_COUNT);
    const enqueue = await measureEnqueue(bench, jobs, ENQUEUE_RUNS);
    const drains = [];
    for (const concurrency of CONCURRENCIES) {
      const sluice = await drainSluice(bench, jobs, 'random-head', 1, concurrency);
      const raw = await drainRaw(bench, jobs, 1, enqueue.rowsPerStatement);
      progress(`drain c${concurrency}: sluice ${fmt(sluice.jobsPerSec)} jobs/s, raw ${fmt(raw.jobsPerSec)} jobs/s`);
      drains.push({ concurrency, sluice, raw, ratio: sluice.jobsPerSec / raw.jobsPerSec });
    }
    const result = {
      otel: otelEnabled,
      enqueue: {
        jobsPerSec: Math.round(enqueue.jobsPerSec),
        rawJobsPerSec: Math.round(enqueue.rawJobsPerSec),
        ratio: Math.round(enqueue.ratio * 100) / 100,
      },
      drain: drains.map((d) => ({
        concurrency: d.concurrency,
        jobsPerSec: Math.round(d.sluice.jobsPerSec),
        rawJobsPerSec: Math.round(d.raw.jobsPerSec),
        ratio: Math.round(d.ratio * 100) / 100,
        statementsPer50: Math.round(statementsPer50(d.sluice) * 100) / 100,
      })),
    };
    const report = [
      `sluice bench ratios — ${bench.server.version}, ${cpus().length} CPUs, load ${loadAtStart.toFixed(1)} at start, ` +
        `OpenTelemetry SDK ${otelEnabled ? 'registered (records every span, exports none)' : 'not registered'}`,
      table(
        ['', 'sluice jobs/s', 'raw jobs/s', 'ratio', 'statements / 50 jobs'],
        [
          [
            'enqueue 100,000 (median of 3)',
            fmt(enqueue.jobsPerSec),
            fmt(enqueue.rawJobsPerSec),
            enqueue.ratio.toFixed(2),
            '',
          ],
          ...drains.map((d) => [
            `drain random-head ×1 c${d.concurrency}`,
            fmt(d.sluice.jobsPerSec),
            fmt(d.raw.jobsPerSec),
            d.ratio.toFixed(2),
            statementsPer50(d.sluice).toFixed(2),
          ]),
        ],
      ),
      `wall time ${((performance.now() - started) / 1000).toFixed(0)} s`,
    ].join('\n');
    process.stdout.write(`${report}\n${JSON.stringify(result)}\n`);
  } finally {
    await bench.close();
  }
}

await main();
