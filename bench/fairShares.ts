/**
 * `npm run bench -- fair`: fair shares between groups. Tenant A enqueues FAIR_A_JOBS noop jobs (group
 * 'A', one batch), then tenant B enqueues 10 (group 'B'); then WORKERS `sluice work` processes
 * (concurrency 10) drain the queue. Measured from job_history's claim times on the DB clock: how
 * long after the fleet was ready B's first and last jobs started, how many of A's jobs started
 * before B's last, and the whole drain's time (a fair queue must not slow one group's drain down).
 * Once with the queue not fair, once fair (window FAIR_WINDOW). Progress goes to stderr; stdout
 * gets the table and, as its last line, the result as JSON.
 */

import type { RowDataPacket } from 'mysql2/promise';
import { openBench, truncate } from './benchDatabase.ts';
import { startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE, makeJobs } from './workload.ts';

const A_JOBS = Number(process.env.FAIR_A_JOBS ?? 20_000);
const B_JOBS = 10;
const WORKERS = Number(process.env.FAIR_WORKERS ?? 2);
const WINDOW = Number(process.env.FAIR_WINDOW ?? 500);
const CONCURRENCY = 10;
const JOBS_DIR = new URL('./jobs/', import.meta.url).pathname;

const bench = await openBench('sluice_bench_fair');
const { conn } = bench;
const p = bench.prefix;
const query = async (sql: string, params: unknown[] = []) => (await conn.query<RowDataPacket[]>(sql, params))[0];

try {
  const result = [];
  for (const fair of [false, true]) {
    await truncate(conn, [bench.tables.jobs, bench.tables.batches, bench.tables.jobHistory]);
    await truncate(conn, [`${p}job_holds`, `${p}job_groups`, `${p}job_group_members`, `${p}queues`]);
    await bench.sluice.queues.setLimits(BENCH_QUEUE, fair ? { fair: true, fairWindow: WINDOW } : { fair: false });
    const a = await bench.sluice.enqueueBatch(makeJobs(A_JOBS).map((job) => ({ ...job, group: 'A' })));
    const b = await bench.sluice.enqueueBatch(makeJobs(B_JOBS).map((job) => ({ ...job, group: 'B' })));
    progress(`fair ${fair}: ${A_JOBS} of A and ${B_JOBS} of B enqueued; starting ${WORKERS} workers`);
    const args = ['--import', 'tsx', ...SLUICE_CLI, 'work', '--queues', BENCH_QUEUE];
    args.push('--concurrency', String(CONCURRENCY), '--jobs', JOBS_DIR, '--prefix', bench.prefix);
    const fleet = await startFleet(WORKERS, args, { LOG_LEVEL: 'warn', MYSQL_URL: bench.url });
    const [ready] = await query('SELECT NOW(3) AS now');
    const readyAt = ready?.now as Date;
    const started = performance.now();
    for (;;) {
      const [left] = await query(`SELECT COUNT(*) AS n FROM \`${p}jobs\``);
      if (Number(left?.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const drainSeconds = (performance.now() - started) / 1000;
    await fleet.stop();
    const [bStarts] = await query(
      `SELECT TIMESTAMPDIFF(MICROSECOND, ?, MIN(started_at)) / 1e6 AS first_s,
              TIMESTAMPDIFF(MICROSECOND, ?, MAX(started_at)) / 1e6 AS last_s, MAX(started_at) AS last_at
       FROM \`${p}job_history\` WHERE batch_id = ?`,
      [readyAt, readyAt, b.batchId],
    );
    const [aBefore] = await query(
      `SELECT COUNT(*) AS n FROM \`${p}job_history\` WHERE batch_id = ? AND started_at < ?`,
      [a.batchId, bStarts?.last_at],
    );
    const row = {
      fair,
      bFirstStartS: Number(Number(bStarts?.first_s).toFixed(2)),
      bLastStartS: Number(Number(bStarts?.last_s).toFixed(2)),
      aStartedBeforeBLast: Number(aBefore?.n),
      drainSeconds: Number(drainSeconds.toFixed(1)),
      jobsPerSec: Math.round((A_JOBS + B_JOBS) / drainSeconds),
    };
    progress(`fair ${fair}: ${JSON.stringify(row)}`);
    result.push(row);
  }
  process.stdout.write(
    `${table(
      ['queue', "B's first start (s)", "B's last start (s)", "A's jobs started before B's last", 'drain (s)', 'jobs/s'],
      result.map((r) => [
        r.fair ? `fair (window ${WINDOW})` : 'not fair',
        String(r.bFirstStartS),
        String(r.bLastStartS),
        r.aStartedBeforeBLast.toLocaleString('en-US'),
        String(r.drainSeconds),
        String(r.jobsPerSec),
      ]),
    )}\n${JSON.stringify({ aJobs: A_JOBS, bJobs: B_JOBS, workers: WORKERS, concurrency: CONCURRENCY, window: WINDOW, result })}\n`,
  );
} finally {
  await bench.close();
}
