/**
 * `npm run bench -- stall`: how long a handler may block its worker's event loop before the
 * maintenance process takes the worker for dead and releases its claims — measured, at the
 * defaults (heartbeat 2 s, missedHeartbeats 2.5, a maintenance pass every 5 s plus up to 1 s of
 * jitter), with real processes: one `sluice maintenance` and one `sluice work --concurrency 1`
 * on the bench database. Each trial enqueues one job (stallJobs/stall.ts) that waits a random
 * part of a heartbeat period, then spins the CPU for the stall length; its retry_times when it
 * ends says whether the worker kept its claim (0) or lost it (> 0). Stall lengths come from
 * argv in seconds (default below), ROUNDS trials each. Progress goes to stderr; stdout gets the
 * table and, as its last line, the result as JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { openBench } from './benchDatabase.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';

const DEFAULT_STALLS_S = [2, 3, 4.5, 6, 8, 10, 13];
const ROUNDS = Number(process.env.STALL_ROUNDS ?? 3);
const HEARTBEAT_MS = 2_000;
const QUEUE = 'stall';
const JOBS_DIR = fileURLToPath(new URL('./stallJobs/', import.meta.url));
/** The maintenance process's first pass registers it as leader; let the worker beat a few times first. */
const SETTLE_MS = 12_000;

interface StallRow {
  readonly stallSeconds: number;
  readonly trials: number;
  readonly kept: number;
  readonly lost: number;
}

const stalls = process.argv.slice(2).map(Number);
const stallSeconds = stalls.length > 0 ? stalls : DEFAULT_STALLS_S;
if (stallSeconds.some((s) => !(s > 0)))
  throw new Error(`stall lengths must be positive seconds, got ${process.argv.slice(2).join(' ')}`);

const bench = await openBench('sluice_bench_stall');
try {
  const env = { MYSQL_URL: bench.url, LOG_LEVEL: 'warn' };
  const common = ['--prefix', bench.prefix];
  const maintenance = await startFleet(1, ['--import', 'tsx', ...SLUICE_CLI, 'maintenance', ...common], env);
  const rows = await measureWithFleet(maintenance, 'maintenance', async () => {
    const worker = await startFleet(
      1,
      [
        '--import',
        'tsx',
        ...SLUICE_CLI,
        'work',
        '--queues',
        QUEUE,
        '--concurrency',
        '1',
        '--jobs',
        JOBS_DIR,
        ...common,
      ],
      env,
    );
    return measureWithFleet(worker, 'worker', async () => {
      progress(`settling ${SETTLE_MS / 1000} s: maintenance leader elected, worker registered`);
      await sleep(SETTLE_MS);
      const measured: StallRow[] = [];
      for (const seconds of stallSeconds) measured.push(await measureStall(seconds));
      return measured;
    });
  });
  report(rows);
} finally {
  await bench.close();
}

async function measureStall(seconds: number): Promise<StallRow> {
  let kept = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    const phaseMs = Math.floor(Math.random() * HEARTBEAT_MS);
    const { id } = await bench.sluice.enqueue({
      name: 'stall',
      queue: QUEUE,
      payload: { blockMs: seconds * 1000, phaseMs },
    });
    await bench.sluice.jobs.waitFor(id, { timeoutMs: 120_000 });
    const job = await bench.sluice.jobs.get(id);
    if (job === null) throw new Error(`job ${id} vanished`);
    const survived = job.retryTimes === 0;
    if (survived) kept++;
    progress(
      `stall ${seconds} s, round ${round}/${ROUNDS}: claim ${survived ? 'kept' : `lost (retry_times ${job.retryTimes})`}`,
    );
  }
  return { stallSeconds: seconds, trials: ROUNDS, kept, lost: ROUNDS - kept };
}

function report(rows: readonly StallRow[]): void {
  process.stdout.write(
    `Event-loop stall tolerance at the defaults (heartbeat ${HEARTBEAT_MS / 1000} s, missedHeartbeats 2.5, ` +
      `maintenance every 5 s + ≤1 s jitter); ${ROUNDS} trials per length\n\n`,
  );
  process.stdout.write(
    `${table(
      ['stall', 'trials', 'claim kept', 'claim lost'],
      rows.map((r) => [`${r.stallSeconds} s`, String(r.trials), String(r.kept), String(r.lost)]),
    )}\n\n`,
  );
  process.stdout.write(`${JSON.stringify({ stallTolerance: rows })}\n`);
}
