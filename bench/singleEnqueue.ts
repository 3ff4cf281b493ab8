/**
 * Single-job enqueue: ENQUEUERS processes, each enqueuing one job per call, one after another (the
 * way an application enqueues per request), for a few seconds, started together; jobs/s over all
 * of them. sluice (`sluice.enqueue`, enqueueChild.ts) against a raw autocommit INSERT of the same
 * row (rawEnqueueChild.ts), each with no worker on the queue and while 2 worker processes of its
 * own kind drain it as it fills (`sluice work` at its defaults; the raw claim loop, 50 per claim).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { HERE } from './abSide.ts';
import { type Bench, truncate } from './benchDatabase.ts';
import { type Fleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { quietHost } from './quietHost.ts';
import { SLUICE_CLI } from './sourceCli.ts';
import { BENCH_QUEUE } from './workload.ts';

export const ENQUEUERS = 8;
export const DRAINING_WORKERS = 2;
const QUIET_GIVE_UP_MS = 5_000;
const SLUICE_CHILD = fileURLToPath(new URL('./enqueueChild.ts', import.meta.url));
const RAW_CHILD = fileURLToPath(new URL('./rawEnqueueChild.ts', import.meta.url));
const RAW_WORKER = fileURLToPath(new URL('./rawWorker.ts', import.meta.url));
const JOBS_DIR = fileURLToPath(new URL('./jobs', import.meta.url));

export interface SingleEnqueueRow {
  readonly side: 'sluice' | 'raw';
  /** Worker processes draining the queue meanwhile (0: none). */
  readonly workers: number;
  readonly jobsPerSec: number;
}

export async function measureSingleEnqueue(bench: Bench, seconds: number): Promise<SingleEnqueueRow[]> {
  const rows: SingleEnqueueRow[] = [];
  for (const workers of [0, DRAINING_WORKERS]) {
    for (const side of ['sluice', 'raw'] as const) {
      const jobsPerSec = await measureOne(bench, side, workers, seconds);
      progress(`single enqueue ×${ENQUEUERS}, ${workers} workers draining: ${side} ${Math.round(jobsPerSec)} jobs/s`);
      rows.push({ side, workers, jobsPerSec });
    }
  }
  return rows;
}

async function measureOne(bench: Bench, side: 'sluice' | 'raw', workers: number, seconds: number): Promise<number> {
  const env = { LOG_LEVEL: 'warn', MYSQL_URL: bench.url };
  if (side === 'sluice') await truncate(bench.conn, [bench.tables.jobs, bench.tables.jobHistory, bench.tables.batches]);
  else await truncate(bench.conn, [bench.tables.raw]);
  const workerArgs =
    side === 'sluice'
      ? [
          '--import',
          'tsx',
          ...SLUICE_CLI,
          'work',
          '--queues',
          BENCH_QUEUE,
          '--jobs',
          JOBS_DIR,
          '--prefix',
          bench.prefix,
        ]
      : ['--import', 'tsx', RAW_WORKER, '--table', bench.tables.raw, '--queue', BENCH_QUEUE, '--batch', '50'];
  const childArgs =
    side === 'sluice'
      ? [SLUICE_CHILD, HERE, bench.prefix, String(seconds)]
      : [RAW_CHILD, bench.tables.raw, String(seconds)];
  const fleet: Fleet | null = workers > 0 ? await startFleet(workers, workerArgs, env) : null;
  let rate: number;
  try {
    // What the previous step left the server doing (flushing a bulk load) stays out of this window.
    await quietHost(`single enqueue ${side}`, QUIET_GIVE_UP_MS);
    rate = await timeEnqueuers(childArgs, env, ENQUEUERS);
  } catch (error) {
    await fleet?.stop();
    throw error;
  }
  const codes = (await fleet?.stop()) ?? [];
  if (codes.some((c) => c !== 0)) throw new Error(`single enqueue: worker exit codes ${codes.join(', ')}`);
  return rate;
}

/**
 * `count` enqueuer children (node --import tsx …childArgs), each saying 'ready', all sent 'go'
 * at once, each answering { jobs } when its time is up: the jobs of all over the elapsed time.
 */
export async function timeEnqueuers(childArgs: readonly string[], env: NodeJS.ProcessEnv, count: number) {
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', 'tsx', ...childArgs], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 2, 2, 'ipc'],
    }),
  );
  try {
    await Promise.all(children.map((c) => message(c)));
    const started = performance.now();
    for (const child of children) child.send('go');
    const counts = (await Promise.all(children.map((c) => message(c)))) as { jobs: number }[];
    const elapsed = (performance.now() - started) / 1000;
    await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : null)));
    return counts.reduce((sum, m) => sum + m.jobs, 0) / elapsed;
  } catch (error) {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  }
}

function message(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`enqueuer exited with ${code}`)));
  });
}
