/**
 * `npm run bench -- groups`: what the group machinery costs per job as the groups grow. The same
 * GROUPS_JOBS noop jobs are enqueued (batches of 1,000) and drained (one in-process worker of
 * concurrency 20), spread evenly over 10 groups, then over GROUPS_MAX groups (one job each at the
 * default), in two modes: each group with a concurrency limit that does not bind (every job flagged
 * and settled in its completion) and a fair queue whose window does not bind (settled after the
 * commit by the worker, per group and interval). Measured per job: the statements this process sent
 * (mysql2's diagnostics channel: the enqueuer's and the worker's; the server's counters would count
 * others' work too) and the wall time, for the enqueue and the drain. Progress goes to stderr; stdout gets the table and, as its last line, the result as JSON.
 */

import { subscribe } from 'node:diagnostics_channel';
import type { RowDataPacket } from 'mysql2/promise';
import { defineJob } from 'sluice';
import { openBench, truncate } from './benchDatabase.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';
import { BENCH_QUEUE, makeJobs } from './workload.ts';

const JOBS = Number(process.env.GROUPS_JOBS ?? 20_000);
const MAX_GROUPS = Number(process.env.GROUPS_MAX ?? JOBS);
const SHAPES = [10, MAX_GROUPS] as const;
const MODES = ['limited', 'fair'] as const;
const BATCH = 1_000;
const NOT_BINDING = 1_000_000;

let statements = 0;
const count = () => {
  statements++;
};
subscribe('tracing:mysql2:query:start', count);
subscribe('tracing:mysql2:execute:start', count);

const noop = defineJob({ name: 'noop', handle() {} });
const bench = await openBench('sluice_bench_groups');
const { conn } = bench;
const p = bench.prefix;
const query = async (sql: string) => (await conn.query<RowDataPacket[]>(sql))[0];

interface Phase {
  readonly statementsPerJob: number;
  readonly msPerThousand: number;
}

async function measure(run: () => Promise<void>): Promise<Phase> {
  const before = statements;
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  return { statementsPerJob: (statements - before) / JOBS, msPerThousand: (ms * 1000) / JOBS };
}

async function drain(): Promise<void> {
  const worker = bench.sluice.worker({ jobs: [noop], queues: [BENCH_QUEUE], concurrency: 20, pollIntervalMs: 20 });
  await worker.start();
  try {
    for (;;) {
      const [left] = await query(`SELECT COUNT(*) AS n FROM \`${p}jobs\``);
      if (Number(left?.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await worker.stop();
  }
}

try {
  const results = [];
  for (const mode of MODES) {
    for (const groups of SHAPES) {
      await truncate(conn, [bench.tables.jobs, bench.tables.batches, bench.tables.jobHistory]);
      await truncate(conn, [`${p}job_holds`, `${p}job_groups`, `${p}job_group_members`, `${p}queues`]);
      await bench.sluice.queues.setLimits(
        BENCH_QUEUE,
        mode === 'fair' ? { fair: true, fairWindow: NOT_BINDING } : { fair: false },
      );
      const limits = mode === 'limited' ? { groupLimits: { concurrency: NOT_BINDING } } : {};
      const jobs = makeJobs(JOBS).map((job, n) => ({ ...job, group: `tenant-${n % groups}`, ...limits }));
      progress(`${mode}, ${groups} groups: enqueueing ${JOBS} jobs`);
      const enqueue = await measure(async () => {
        for (let i = 0; i < jobs.length; i += BATCH) await bench.sluice.enqueueBatch(jobs.slice(i, i + BATCH));
      });
      const [held] = await query(`SELECT COUNT(*) AS n FROM \`${p}job_holds\``);
      progress(`${mode}, ${groups} groups: draining (${Number(held?.n)} held)`);
      const drained = await measure(drain);
      results.push({ mode, groups, jobs: JOBS, enqueue, drain: drained });
    }
  }
  const f = (n: number) => n.toFixed(2);
  process.stdout.write(
    `${table(
      ['mode', 'groups', 'enqueue stmt/job', 'enqueue ms/1k', 'drain stmt/job', 'drain ms/1k'],
      results.map((r) => [
        r.mode,
        r.groups.toLocaleString('en'),
        f(r.enqueue.statementsPerJob),
        f(r.enqueue.msPerThousand),
        f(r.drain.statementsPerJob),
        f(r.drain.msPerThousand),
      ]),
    )}\n${JSON.stringify(results)}\n`,
  );
} finally {
  await bench.close();
}
