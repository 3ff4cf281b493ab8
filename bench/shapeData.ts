/**
 * The shape bench's two installs, side by side in one database (BENCH_DATABASE, default
 * sluice_bench_shape, dropped and made again each run): `shape_` — 10,000 queues with live, dead and
 * finished jobs, 1,000 of them limited, 1,000 with a latency promise, 300 more with group defaults
 * whose 100,000 groups each hold a job, a 10,000-job chain and a 100,000-leaf fan-out — and `one_`,
 * one queue holding as many plain jobs. Plain, dead and finished rows are made by the server
 * (INSERT … SELECT over a digits cross join, MySQL and MariaDB alike); groups, graphs, limits and
 * promises through the public API, so that every row they need besides is written as sluice
 * writes it. `--small` divides every count by ten.
 */
import type { Sluice } from 'sluice';
import { JOB_FLAGS } from '../src/model/jobFlags.ts';
import { progress } from './progress.ts';
import { JOB_NAME } from './workload.ts';

export interface ShapeCounts {
  readonly queues: number;
  readonly limited: number;
  readonly promised: number;
  readonly groupQueues: number;
  readonly groups: number;
  readonly chain: number;
  readonly fanOut: number;
  /** Plain live jobs per queue of the `queues`. */
  readonly jobsPerQueue: number;
}

export const FULL: ShapeCounts = {
  queues: 10_000,
  limited: 1_000,
  promised: 1_000,
  groupQueues: 300,
  groups: 100_000,
  chain: 10_000,
  fanOut: 100_000,
  jobsPerQueue: 3,
};

export const SMALL: ShapeCounts = {
  queues: 1_000,
  limited: 100,
  promised: 100,
  groupQueues: 30,
  groups: 10_000,
  chain: 1_000,
  fanOut: 10_000,
  jobsPerQueue: 3,
};

const DIGITS =
  '(SELECT 0 d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)';
/** 0 … 99,999. */
const SEQ = `(SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n FROM ${DIGITS} a, ${DIGITS} b, ${DIGITS} c, ${DIGITS} e, ${DIGITS} f)`;

export const queueName = (n: number) => `q-${String(n).padStart(5, '0')}`;
const groupQueueName = (n: number) => `g-${String(n).padStart(3, '0')}`;

/** The ids the pages of the report open: a job in the middle of the chain, the fan-out's parent and its batch. */
export interface ShapeIds {
  readonly chainJob: number;
  readonly fanOutParent: number;
  readonly fanOutBatch: number;
}

/**
 * Plain live jobs (`perQueue` on each of `queues` queues named by `name`), one dead job and one
 * finished job per queue: `name` is an SQL expression of `s.n`, the queue's number.
 */
async function plainRows(sluice: Sluice, queues: number, perQueue: number, name: string): Promise<void> {
  const t = sluice.tables;
  const raw = (sql: string) => sluice.knex.raw(sql);
  for (let k = 0; k < perQueue; k++) {
    await raw(`
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, created_at)
SELECT ${name}, '${JOB_NAME}', CONCAT('{"n":', s.n, '}'), 0,
       IF(${k} = 2, NOW(3) + INTERVAL 1 DAY, NOW(3) - INTERVAL (s.n % 600) SECOND), NOW(3) - INTERVAL 1 HOUR
FROM ${SEQ} s WHERE s.n < ${queues}`);
  }
  await raw(`
INSERT INTO ${t.deadJobs} (id, queue, name, payload, priority, retry_times, max_retries, last_error, created_at, failed_at)
SELECT 90000000 + s.n, ${name}, '${JOB_NAME}', '{}', 0, 4, 3, 'Error: boom', NOW(3) - INTERVAL 1 DAY,
       NOW(3) - INTERVAL (s.n % 3600) SECOND
FROM ${SEQ} s WHERE s.n < ${queues}`);
  await raw(`
INSERT INTO ${t.jobHistory} (job_id, queue, name, payload, retry_times, created_at, finished_at, result)
SELECT 80000000 + s.n, ${name}, '${JOB_NAME}', '{}', 0, NOW(3) - INTERVAL 1 DAY,
       NOW(3) - INTERVAL (s.n % 3600) SECOND, '{"ok":true}'
FROM ${SEQ} s WHERE s.n < ${queues}`);
}

/**
 * One job in each of `groups` groups over the queues with group defaults, as an enqueue writes a
 * job whose group has room (GroupEntry, settleGroup): the job free to start and flagged inGroup, its
 * group's row counting it active, its membership row. The enqueue settles each group it touched
 * with statements of its own, which is why the bench writes these rows itself.
 */
async function groupRows(sluice: Sluice, c: ShapeCounts): Promise<void> {
  const t = sluice.tables;
  const raw = (sql: string) => sluice.knex.raw(sql);
  await raw(`
INSERT INTO ${t.jobs} (queue, name, payload, priority, run_at, group_key, flags, created_at)
SELECT CONCAT('g-', LPAD(s.n % ${c.groupQueues}, 3, '0')), '${JOB_NAME}', CONCAT('{"n":', s.n, '}'), 0,
       NOW(3) - INTERVAL (s.n % 600) SECOND, CONCAT('k-', s.n), ${JOB_FLAGS.inGroup}, NOW(3) - INTERVAL 1 HOUR
FROM ${SEQ} s WHERE s.n < ${c.groups}`);
  await raw(`
INSERT INTO ${t.jobGroups} (queue, group_key, active)
SELECT queue, group_key, 1 FROM ${t.jobs} WHERE group_key IS NOT NULL`);
  await raw(`
INSERT INTO ${t.jobGroupMembers} (queue, group_key, job_id)
SELECT queue, group_key, id FROM ${t.jobs} WHERE group_key IS NOT NULL`);
}

export async function buildShape(sluice: Sluice, c: ShapeCounts): Promise<ShapeIds> {
  progress(`shape: ${c.queues} queues × ${c.jobsPerQueue} jobs, a dead and a finished job each`);
  await plainRows(sluice, c.queues, c.jobsPerQueue, `CONCAT('q-', LPAD(s.n, 5, '0'))`);
  progress(`shape: ${c.limited} limited queues, ${c.promised} promises, ${c.groupQueues} group defaults`);
  for (let n = 0; n < c.limited; n++) await sluice.queues.setLimits(queueName(n), { concurrency: 5 });
  for (let n = 0; n < c.promised; n++)
    await sluice.queues.setPromise(queueName(c.limited + n), { startWithinMs: 3_600_000, maxReady: 1_000 });
  for (let n = 0; n < c.groupQueues; n++) await sluice.queues.setLimits(groupQueueName(n), { groupConcurrency: 2 });
  progress(`shape: ${c.groups} groups with a job each`);
  await groupRows(sluice, c);
  progress(`shape: a ${c.chain}-job chain`);
  await sluice.enqueueBatch(
    Array.from({ length: c.chain }, (_, i) => ({
      name: JOB_NAME,
      queue: 'chain',
      ref: `c${i}`,
      ...(i === 0 ? {} : { parents: [`c${i - 1}`] }),
      payload: { n: i },
    })),
  );
  progress(`shape: a ${c.fanOut}-leaf fan-out`);
  const fanOut = await sluice.enqueueBatch([
    { name: JOB_NAME, queue: 'fanout', ref: 'root', payload: {} },
    ...Array.from({ length: c.fanOut }, (_, i) => ({
      name: JOB_NAME,
      queue: 'fanout',
      parents: ['root'],
      payload: { n: i },
    })),
  ]);
  await analyze(sluice);
  const [[ids]] = (await sluice.knex.raw(
    `SELECT (SELECT MIN(id) FROM ${sluice.tables.jobs} WHERE queue = 'chain') AS chain,
            (SELECT MIN(id) FROM ${sluice.tables.jobs} WHERE queue = 'fanout') AS fanout`,
  )) as [[{ chain: number; fanout: number }]];
  return {
    chainJob: Number(ids.chain) + Math.floor(c.chain / 2),
    fanOutParent: Number(ids.fanout),
    fanOutBatch: fanOut.batchId ?? 0,
  };
}

/** One queue: as many plain jobs as the shape's queues hold, one dead and one finished job. */
export async function buildOneQueue(sluice: Sluice, c: ShapeCounts): Promise<void> {
  progress(`one queue: ${c.queues * c.jobsPerQueue} jobs`);
  await plainRows(sluice, c.queues * c.jobsPerQueue, 1, `'default'`);
  const t = sluice.tables;
  await sluice.knex.raw(`DELETE FROM ${t.deadJobs} WHERE id > 90000000`);
  await sluice.knex.raw(`DELETE FROM ${t.jobHistory} WHERE job_id > 80000000`);
  await analyze(sluice);
}

async function analyze(sluice: Sluice): Promise<void> {
  const t = sluice.tables;
  for (const table of [t.jobs, t.jobHistory, t.deadJobs, t.queues, t.jobGroups, t.jobHolds, t.jobEdges])
    await sluice.knex.raw(`ANALYZE TABLE ${table}`);
}
