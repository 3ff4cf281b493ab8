/**
 * `npm run bench -- limits`: what a queue limit costs a drain. The same drain (JOBS noop jobs, WORKERS
 * `sluice work` processes of concurrency 50; bench/drain.ts's clock and statement counts) with the
 * queue unlimited, with a cap and a rate too high to bind (the cost of the limited claim itself:
 * a short transaction on the queue's row), and with a cap of 50 that binds. ROUNDS rounds, the
 * settings alternating within each. Progress goes to stderr; stdout gets the table and, as its last
 * line, the result as JSON.
 */

import type { QueueLimits } from 'sluice';
import { openBench, truncate } from './benchDatabase.ts';
import { type DrainMeasurement, measureDrain } from './drain.ts';
import { median } from './median.ts';
import { table } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE, makeJobs } from './workload.ts';

const JOBS = Number(process.env.LIMITS_JOBS ?? 20_000);
const WORKERS = Number(process.env.LIMITS_WORKERS ?? 4);
const ROUNDS = Number(process.env.LIMITS_ROUNDS ?? 2);
const CONCURRENCY = 50;
const JOBS_DIR = new URL('./jobs/', import.meta.url).pathname;

const SETTINGS: readonly { readonly label: string; readonly limits: QueueLimits }[] = [
  { label: 'no limit', limits: { concurrency: null, rate: null } },
  { label: 'cap 100,000 (not binding)', limits: { concurrency: 100_000, rate: null } },
  {
    label: 'rate 1,000,000/s (not binding)',
    limits: { concurrency: null, rate: { limit: 1_000_000, intervalMs: 1_000 } },
  },
  { label: 'cap 50 (binding)', limits: { concurrency: 50, rate: null } },
];

const bench = await openBench('sluice_bench_limits');
try {
  const runs = new Map<string, DrainMeasurement[]>(SETTINGS.map((s) => [s.label, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const setting of SETTINGS) {
      await truncate(bench.conn, [bench.tables.jobs, bench.tables.batches, bench.tables.jobHistory]);
      await bench.sluice.queues.setLimits(BENCH_QUEUE, setting.limits);
      await bench.sluice.enqueueBatch(makeJobs(JOBS));
      const args = ['--import', 'tsx', ...SLUICE_CLI, 'work', '--queues', BENCH_QUEUE];
      args.push('--concurrency', String(CONCURRENCY), '--jobs', JOBS_DIR, '--prefix', bench.prefix);
      const measured = await measureDrain(
        bench.conn,
        {
          label: `${setting.label} (round ${round})`,
          table: bench.tables.jobs,
          queue: BENCH_QUEUE,
          workers: WORKERS,
          args,
          env: { LOG_LEVEL: 'warn', MYSQL_URL: bench.url },
        },
        JOBS,
      );
      runs.get(setting.label)?.push(measured);
    }
  }
  const perThousand = (m: DrainMeasurement) =>
    (1000 * Object.values(m.statements).reduce((a, b) => a + b, 0)) / (m.jobs + m.startedEarly);
  const result = SETTINGS.map(({ label }) => {
    const measured = runs.get(label) ?? [];
    return {
      label,
      jobsPerSec: measured.map((m) => Math.round(m.jobsPerSec)),
      medianJobsPerSec: Math.round(median(measured.map((m) => m.jobsPerSec))),
      statementsPer1000Jobs: Math.round(median(measured.map(perThousand))),
    };
  });
  process.stdout.write(
    `${table(
      ['setting', 'jobs/s (each round)', 'median', 'statements per 1,000 jobs'],
      result.map((r) => [
        r.label,
        r.jobsPerSec.join(' / '),
        String(r.medianJobsPerSec),
        String(r.statementsPer1000Jobs),
      ]),
    )}\n${JSON.stringify({ jobs: JOBS, workers: WORKERS, concurrency: CONCURRENCY, result })}\n`,
  );
} finally {
  await bench.close();
}
