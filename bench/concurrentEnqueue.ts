/**
 * `npm run bench -- enqueue [--base DIR] [--enqueuers 8] [--seconds 10]
 * [--rounds 3] [--workers 0,2]`: enqueue throughput of N processes, each enqueuing single jobs one
 * after another into one queue (bench/enqueueChild.ts), started together: do they serialise on a
 * row? For each count of idle `sluice work` processes on that queue (0: nothing to wake; 2: every
 * enqueue rings a worker, which claims and runs the job), the sides alternate round by round
 * (--base: another checkout first, each side on its own prefix migrated by its own code).
 * Prints each round, the medians, and one JSON line. `--shapes`: the single-enqueue shapes of
 * enqueueShapes.ts instead (2 × 64 callers and 8 × 1, against the raw INSERT and BullMQ AOF).
 */
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { migrateSide, type Side, sideCli, sidesOf, withScratchDatabase } from './abSide.ts';
import { measureEnqueueShapes } from './enqueueShapes.ts';
import { median } from './median.ts';
import { type Fleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { timeEnqueuers } from './singleEnqueue.ts';

const CHILD = new URL('./enqueueChild.ts', import.meta.url).pathname;

export interface EnqueueRow {
  readonly side: string;
  readonly workers: number;
  readonly runs: number[];
  readonly jobsPerSec: number;
}

/** One measurement: `enqueuers` processes for `seconds`, with `workers` worker processes idle on the queue. */
export async function measureConcurrentEnqueue(
  side: Side,
  url: string,
  enqueuers: number,
  seconds: number,
  workers: number,
): Promise<number> {
  const admin = await createConnection({ uri: url });
  await admin.query(`TRUNCATE TABLE \`${side.prefix}jobs\``);
  await admin.query(`TRUNCATE TABLE \`${side.prefix}job_history\``);
  await admin.end();
  let fleet: Fleet | null = null;
  let rate: number;
  if (workers > 0) {
    const args = [...sideCli(side, 'work'), '--queues', 'bench', '--jobs', `${side.root}/bench/jobs`];
    fleet = await startFleet(workers, args, { LOG_LEVEL: 'warn', MYSQL_URL: url });
  }
  try {
    ({ jobsPerSec: rate } = await timeEnqueuers(
      [CHILD, side.root, side.prefix, String(seconds)],
      { MYSQL_URL: url },
      enqueuers,
      seconds,
    ));
  } catch (error) {
    await fleet?.stop();
    throw error;
  }
  const codes = (await fleet?.stop()) ?? [];
  if (codes.some((c) => c !== 0)) throw new Error(`worker exit codes ${codes.join(', ')}`);
  return rate;
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      base: { type: 'string' },
      enqueuers: { type: 'string', default: '8' },
      seconds: { type: 'string', default: '10' },
      rounds: { type: 'string', default: '3' },
      workers: { type: 'string', default: '0,2' },
    },
  });
  await withScratchDatabase('enq', async (url) => {
    const sides = sidesOf(v.base, 'enq');
    for (const side of sides) migrateSide(side, url);
    const rows: EnqueueRow[] = [];
    for (const workers of v.workers.split(',').map(Number)) {
      const runs = new Map<Side, number[]>(sides.map((s) => [s, []]));
      for (let round = 1; round <= Number(v.rounds); round++) {
        for (const side of sides) {
          const rate = await measureConcurrentEnqueue(side, url, Number(v.enqueuers), Number(v.seconds), workers);
          runs.get(side)?.push(rate);
          progress(`enqueue ×${v.enqueuers}, ${workers} workers, round ${round}: ${side.label} ${fmt(rate)} jobs/s`);
        }
      }
      for (const side of sides) {
        const r = runs.get(side) ?? [];
        rows.push({ side: side.label, workers, runs: r, jobsPerSec: median(r) });
      }
    }
    process.stdout.write(`${renderConcurrentEnqueue(Number(v.enqueuers), rows)}\n`);
    process.stdout.write(
      `${JSON.stringify({ concurrentEnqueue: rows.map((r) => ({ ...r, runs: r.runs.map(Math.round), jobsPerSec: Math.round(r.jobsPerSec) })) })}\n`,
    );
  });
}

export function renderConcurrentEnqueue(enqueuers: number, rows: readonly EnqueueRow[]): string {
  return [
    `concurrent enqueue: ${enqueuers} processes, each enqueuing single jobs one after another into one queue (median of rounds)`,
    table(
      ['side', 'idle workers', 'jobs/s', 'runs'],
      rows.map((r) => [r.side, String(r.workers), fmt(r.jobsPerSec), r.runs.map(fmt).join(' / ')]),
    ),
  ].join('\n');
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  // --shapes: 2 processes × 64 callers and 8 × 1, against the raw INSERT and BullMQ AOF (enqueueShapes.ts).
  if (process.argv.includes('--shapes')) await measureEnqueueShapes(process.argv.slice(2));
  else await main();
}
