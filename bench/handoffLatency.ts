/**
 * `npm run bench -- handoff [--workers 2] [--concurrency 10] [--rounds 3] [--poll-ms 200] [--base DIR]`:
 * how soon a freed slot starts the next waiting job, at idle. WORKERS `sluice work` processes
 * (doorbells on, polling at the defaults unless --poll-ms) wait on two queues; then, each round:
 *   - group limit 1: GROUP_JOBS jobs of GROUP_MS ms in one group with a concurrency limit of 1,
 *     enqueued in one batch: each one's start waits for the previous one's completion;
 *   - queue cap: CAP_JOBS jobs of CAP_MS ms on a queue capped at CAP: each start after the first
 *     CAP waits for a running job's completion.
 * The hand-off is read from job_history on the database clock: from a slot's freeing (the
 * finished_at its completion writes, just before its commit) to the start (started_at, the claim's
 * locked_at) of the job that took it. For the cap, the k-th start after the first CAP takes the
 * slot of the k-th completion; its starts per second are set against what the cap allows (CAP ÷
 * CAP_MS). With `--base DIR` (a checkout of an earlier commit: `git archive <commit> | tar -x -C DIR`
 * plus a node_modules link, same schema), each round runs its workers first from DIR, then from
 * this checkout, alternating: a before/after on one loaded host. Progress goes to stderr; stdout
 * gets the table and, as its last line, the result as JSON.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import type { RowDataPacket } from 'mysql2/promise';
import { HERE } from './abSide.ts';
import { type Bench, openBench, truncate } from './benchDatabase.ts';
import { median } from './median.ts';
import { percentiles } from './peers.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';

const { values: v } = parseArgs({
  options: {
    workers: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'poll-ms': { type: 'string' },
    base: { type: 'string' },
  },
});
const WORKERS = Number(v.workers);
const CONCURRENCY = Number(v.concurrency);
const ROUNDS = Number(v.rounds);
const GROUP_QUEUE = 'handoff-group';
const CAP_QUEUE = 'handoff-cap';
const GROUP_JOBS = 40;
const GROUP_MS = 10;
const CAP_JOBS = 90;
const CAP_MS = 100;
const CAP = 3;
/** Time for the workers to park on their doorbells before a round. */
const SETTLE_MS = 1_500;
const JOBS_DIR = new URL('./handoffJobs/', import.meta.url).pathname;

interface Round {
  readonly groupGapsMs: number[];
  readonly capGapsMs: number[];
  readonly capStartsPerSec: number;
}

const SIDES = [
  ...(v.base ? [{ label: `before (${v.base})`, root: resolve(v.base) }] : []),
  { label: 'this checkout', root: HERE },
];

const bench = await openBench('sluice_bench_handoff');
let workers: ChildProcess[] = [];
try {
  await bench.sluice.queues.setLimits(CAP_QUEUE, { concurrency: CAP, rate: null });
  const rounds = new Map<string, Round[]>(SIDES.map((side) => [side.label, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const side of SIDES) {
      workers = [];
      for (let i = 0; i < WORKERS; i++) workers.push(await startWorker(bench, side.root));
      await sleep(SETTLE_MS);
      progress(`round ${round}, ${side.label}: group limit 1, ${GROUP_JOBS} jobs of ${GROUP_MS} ms`);
      const groupGapsMs = consecutiveGaps(await drain(bench, GROUP_QUEUE, GROUP_JOBS, GROUP_MS, true), 1);
      await sleep(SETTLE_MS);
      progress(`round ${round}, ${side.label}: cap ${CAP}, ${CAP_JOBS} jobs of ${CAP_MS} ms`);
      const capped = await drain(bench, CAP_QUEUE, CAP_JOBS, CAP_MS, false);
      const spanMs = Math.max(...capped.map((r) => r.finished)) - Math.min(...capped.map((r) => r.started));
      const capStartsPerSec = (1000 * CAP_JOBS) / spanMs;
      rounds.get(side.label)?.push({ groupGapsMs, capGapsMs: consecutiveGaps(capped, CAP), capStartsPerSec });
      await Promise.all(workers.map(stopWorker));
    }
  }
  report(rounds);
} finally {
  await Promise.all(workers.map(stopWorker));
  await bench.close();
}

interface Stamp {
  readonly started: number;
  readonly finished: number;
}

/** Enqueues `jobs` jobs of `ms` ms (one limited group, or plain), waits for their history rows, returns their times. */
async function drain(b: Bench, queue: string, jobs: number, ms: number, grouped: boolean): Promise<Stamp[]> {
  await truncate(b.conn, [b.tables.jobHistory]);
  const group = grouped ? { group: 'g', groupLimits: { concurrency: 1 } } : {};
  await b.sluice.enqueueBatch(
    Array.from({ length: jobs }, () => ({ name: 'sleep', queue, payload: { ms }, ...group })),
  );
  for (;;) {
    const [rows] = await b.conn.query<RowDataPacket[]>(
      `SELECT UNIX_TIMESTAMP(started_at) * 1000 AS started, UNIX_TIMESTAMP(finished_at) * 1000 AS finished
       FROM \`${b.tables.jobHistory}\` WHERE queue = ?`,
      [queue],
    );
    if (rows.length >= jobs) return rows.map((r) => ({ started: Number(r.started), finished: Number(r.finished) }));
    await sleep(50);
  }
}

/** Pure: from the k-th completion to the start of the (k + slots)-th job: the wait of the job that took the freed slot. */
export function consecutiveGaps(stamps: readonly Stamp[], slots: number): number[] {
  const starts = stamps.map((s) => s.started).sort((a, b) => a - b);
  const finishes = stamps.map((s) => s.finished).sort((a, b) => a - b);
  const gaps: number[] = [];
  for (let k = 0; k + slots < starts.length; k++)
    gaps.push(Math.max(0, (starts[k + slots] as number) - (finishes[k] as number)));
  return gaps;
}

async function startWorker(b: Bench, root: string): Promise<ChildProcess> {
  const args = ['work', '--queues', `${GROUP_QUEUE},${CAP_QUEUE}`, '--concurrency', String(CONCURRENCY)];
  args.push('--jobs', JOBS_DIR, '--prefix', b.prefix);
  if (v['poll-ms']) args.push('--poll-interval-ms', v['poll-ms']);
  const cli = ['--conditions=sluice-source', join(root, 'src/cli/sluice.ts')];
  const child = spawn(process.execPath, ['--import', 'tsx', ...cli, ...args], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, MYSQL_URL: b.url, LOG_LEVEL: 'warn' },
  });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (message) => message === 'ready' && resolve());
    child.on('exit', (code) => reject(new Error(`sluice work exited with ${code} before it was ready`)));
  });
  return child;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

function report(bySide: ReadonlyMap<string, readonly Round[]>): void {
  const allowed = (1000 * CAP) / CAP_MS;
  const ms = (n: number) => n.toFixed(1);
  const rows: string[][] = [];
  const result: Record<string, unknown> = { workers: WORKERS, concurrency: CONCURRENCY, rounds: ROUNDS, allowed };
  for (const [side, rounds] of bySide) {
    const group = percentiles(rounds.flatMap((r) => r.groupGapsMs));
    const cap = percentiles(rounds.flatMap((r) => r.capGapsMs));
    const capRate = median(rounds.map((r) => r.capStartsPerSec));
    const share = `${capRate.toFixed(1)} of ${allowed} (${((100 * capRate) / allowed).toFixed(0)} %)`;
    rows.push([side, `group limit 1, ${GROUP_MS} ms jobs`, ms(group.p50), ms(group.p90), ms(group.p99), '']);
    rows.push([side, `queue cap ${CAP}, ${CAP_MS} ms jobs`, ms(cap.p50), ms(cap.p90), ms(cap.p99), share]);
    result[side] = { group, cap, capRate };
  }
  console.log(table(['workers', 'hand-off', 'median ms', 'p90 ms', 'p99 ms', 'starts/s (of allowed)'], rows));
  console.log(JSON.stringify(result));
}
