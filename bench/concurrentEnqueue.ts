/**
 * `node --import tsx bench/concurrentEnqueue.ts [--base DIR] [--enqueuers 8] [--seconds 10]
 * [--rounds 3] [--workers 0,2] [--raw]`: enqueue throughput of N processes, each enqueuing single jobs one
 * after another into one queue (bench/enqueueChild.ts), started together: do they serialise on a
 * row? For each count of idle `sluice work` processes on that queue (0: nothing to wake; 2: every
 * enqueue rings a worker, which claims and runs the job), the sides alternate round by round
 * (--base: another checkout first, each side on its own prefix migrated by its own code; --raw:
 * last, plain mysql2 autocommit INSERTs of the same rows, bench/rawEnqueueChild.ts, the ceiling).
 * Prints each round, the medians, and one JSON line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { databaseUrl, migrateSide, type Side, sideCli, sidesOf } from './abSide.ts';
import { median } from './median.ts';
import { type Fleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { processCpuUs } from './serverCpu.ts';

const CHILD = new URL('./enqueueChild.ts', import.meta.url).pathname;
const RAW_CHILD = new URL('./rawEnqueueChild.ts', import.meta.url).pathname;
/** The label of the --raw side: plain autocommit INSERTs into this checkout's tables (the ceiling). */
const RAW = 'raw autocommit INSERT';

export interface EnqueueRow {
  readonly side: string;
  readonly workers: number;
  readonly runs: number[];
  readonly jobsPerSec: number;
  /** CPU per job, enqueuers and server together (µs): only with BENCH_SERVER_PID. */
  readonly cpuUsPerJob: number | null;
}

/** One measurement's rate, and its CPU per job when the server's process is known. */
interface EnqueueMeasurement {
  readonly rate: number;
  readonly cpuUsPerJob: number | null;
}

/**
 * BENCH_SERVER_PID: the pid of a server the bench has alone (a throwaway mariadbd on another port).
 * Its CPU, with the enqueuers' own, gives the CPU each job cost: on a host of two shared cores,
 * where eight enqueuers are CPU-bound, the rates' ratio that a quiet host would show, which the
 * host's load blurs far less than the rates themselves.
 */
const SERVER_PID = process.env.BENCH_SERVER_PID ? Number(process.env.BENCH_SERVER_PID) : null;

/** One measurement: `enqueuers` processes for `seconds`, with `workers` worker processes idle on the queue. */
export async function measureConcurrentEnqueue(
  side: Side,
  url: string,
  enqueuers: number,
  seconds: number,
  workers: number,
): Promise<EnqueueMeasurement> {
  const admin = await createConnection({ uri: url });
  await admin.query(`TRUNCATE TABLE \`${side.prefix}jobs\``);
  await admin.query(`TRUNCATE TABLE \`${side.prefix}job_history\``);
  await admin.end();
  let fleet: Fleet | null = null;
  let rate: number;
  let cpuUsPerJob: number | null = null;
  if (workers > 0) {
    const args = [...sideCli(side, 'work'), '--queues', 'bench', '--jobs', `${side.root}/bench/jobs`];
    fleet = await startFleet(workers, args, { LOG_LEVEL: 'warn', MYSQL_URL: url });
  }
  try {
    const children = Array.from({ length: enqueuers }, () =>
      spawn(process.execPath, ['--import', 'tsx', ...enqueuerArgs(side, seconds)], {
        env: { ...process.env, MYSQL_URL: url },
        stdio: ['ignore', 2, 2, 'ipc'],
      }),
    );
    await Promise.all(children.map((c) => message(c)));
    const serverBefore = processCpuUs(SERVER_PID);
    const started = performance.now();
    for (const child of children) child.send('go');
    const counts = (await Promise.all(children.map((c) => message(c)))) as { jobs: number; cpuUs: number }[];
    const serverAfter = processCpuUs(SERVER_PID);
    const elapsed = (performance.now() - started) / 1000;
    await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : null)));
    const jobs = counts.reduce((sum, m) => sum + m.jobs, 0);
    rate = jobs / elapsed;
    if (serverBefore !== null && serverAfter !== null)
      cpuUsPerJob = (serverAfter - serverBefore + counts.reduce((sum, m) => sum + m.cpuUs, 0)) / jobs;
  } catch (error) {
    await fleet?.stop();
    throw error;
  }
  const codes = (await fleet?.stop()) ?? [];
  if (codes.some((c) => c !== 0)) throw new Error(`worker exit codes ${codes.join(', ')}`);
  return { rate, cpuUsPerJob };
}

function enqueuerArgs(side: Side, seconds: number): string[] {
  if (side.label === RAW) return [RAW_CHILD, side.prefix, String(seconds)];
  return [CHILD, side.root, side.prefix, String(seconds)];
}

function message(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`enqueuer exited with ${code}`)));
  });
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      base: { type: 'string' },
      enqueuers: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      workers: { type: 'string', default: '0,2' },
      raw: { type: 'boolean', default: false },
    },
  });
  const url = databaseUrl(`sluice_enq_${randomBytes(3).toString('hex')}`);
  const database = new URL(url).pathname.slice(1);
  const admin = await createConnection({ uri: databaseUrl('') });
  await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  try {
    const sides = sidesOf(v.base, 'enq');
    for (const side of sides) migrateSide(side, url);
    const here = sides.at(-1);
    if (v.raw && here) sides.push({ label: RAW, root: here.root, prefix: here.prefix });
    const rows: EnqueueRow[] = [];
    for (const workers of v.workers.split(',').map(Number)) {
      const runs = new Map<Side, number[]>(sides.map((s) => [s, []]));
      const cpu = new Map<Side, number[]>(sides.map((s) => [s, []]));
      for (let round = 1; round <= Number(v.rounds); round++) {
        for (const side of sides) {
          const m = await measureConcurrentEnqueue(side, url, Number(v.enqueuers), Number(v.seconds), workers);
          runs.get(side)?.push(m.rate);
          if (m.cpuUsPerJob !== null) cpu.get(side)?.push(m.cpuUsPerJob);
          const perJob = m.cpuUsPerJob === null ? '' : `, ${m.cpuUsPerJob.toFixed(1)} µs of CPU per job`;
          progress(
            `enqueue ×${v.enqueuers}, ${workers} workers, round ${round}: ${side.label} ${fmt(m.rate)} jobs/s${perJob}`,
          );
        }
      }
      for (const side of sides) {
        const r = runs.get(side) ?? [];
        const c = cpu.get(side) ?? [];
        rows.push({
          side: side.label,
          workers,
          runs: r,
          jobsPerSec: median(r),
          cpuUsPerJob: c.length > 0 ? median(c) : null,
        });
      }
    }
    process.stdout.write(`${renderConcurrentEnqueue(Number(v.enqueuers), rows)}\n`);
    process.stdout.write(
      `${JSON.stringify({ concurrentEnqueue: rows.map((r) => ({ ...r, runs: r.runs.map(Math.round), jobsPerSec: Math.round(r.jobsPerSec), cpuUsPerJob: r.cpuUsPerJob === null ? null : Math.round(r.cpuUsPerJob) })) })}\n`,
    );
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.end();
  }
}

export function renderConcurrentEnqueue(enqueuers: number, rows: readonly EnqueueRow[]): string {
  return [
    `concurrent enqueue: ${enqueuers} processes, each enqueuing single jobs one after another into one queue (median of rounds)`,
    table(
      ['side', 'idle workers', 'jobs/s', 'runs', 'CPU µs/job'],
      rows.map((r) => [
        r.side,
        String(r.workers),
        fmt(r.jobsPerSec),
        r.runs.map(fmt).join(' / '),
        r.cpuUsPerJob === null ? '—' : r.cpuUsPerJob.toFixed(1),
      ]),
    ),
  ].join('\n');
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
