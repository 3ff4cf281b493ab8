/**
 * `npm run bench -- rate`: how closely a queue's rate limit holds with a fleet claiming it flat out.
 * WORKERS real `sluice work` processes (default 8, concurrency 10 each) run one queue limited to
 * LIMIT starts per INTERVAL_MS (default 100 per 1,000 ms) for DURATION_S (default 60 s), with far
 * more jobs waiting than can start. Each handler (rateJobs/stamp.ts) writes its own start time;
 * the starts are counted per window (aligned to the clock, as the limit's windows are), the first
 * and last, partial, windows left out. With `--group` the limit is a per-group rate instead (the
 * queue's groupRate) and every job belongs to one group: the same count shows how closely a group's
 * rate holds. Group mode enqueues once the fleet is up, unless `--early`: then the backlog is written
 * before the fleet starts, and its first windows' jobs are overdue when the workers come (a fleet
 * that was down). Progress goes to stderr; stdout gets the table and, as its last line, the result
 * as JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { RowDataPacket } from 'mysql2/promise';
import { openBench } from './benchDatabase.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';
import { SLUICE_CLI } from './sourceCli.ts';

const WORKERS = Number(process.env.RATE_WORKERS ?? 8);
const LIMIT = Number(process.env.RATE_LIMIT ?? 100);
const INTERVAL_MS = Number(process.env.RATE_INTERVAL_MS ?? 1_000);
const DURATION_S = Number(process.env.RATE_DURATION_S ?? 60);
const QUEUE = 'rated';
const GROUP_MODE = process.argv.includes('--group');
const EARLY = !GROUP_MODE || process.argv.includes('--early');
const JOBS_DIR = fileURLToPath(new URL('./rateJobs/', import.meta.url));

const bench = await openBench(process.env.BENCH_DATABASE ?? 'sluice_bench_rate');
try {
  await bench.conn.query(
    `CREATE TABLE rate_starts (
  id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  pid INT NOT NULL,
  started_ms DOUBLE NOT NULL,
  claimed_ms DOUBLE NOT NULL
)`,
  );
  const rate = { limit: LIMIT, intervalMs: INTERVAL_MS };
  await bench.sluice.queues.setLimits(QUEUE, GROUP_MODE ? { groupRate: rate } : { rate });
  const windows = Math.ceil((DURATION_S * 1_000) / INTERVAL_MS);
  const backlog = Math.ceil(LIMIT * windows * 1.5);
  const enqueue = () =>
    bench.sluice.enqueueBatch(
      Array.from({ length: backlog }, () => ({
        name: 'stamp',
        queue: QUEUE,
        payload: { jobsTable: bench.tables.jobs },
        ...(GROUP_MODE ? { group: 'tenant-1' } : {}),
      })),
    );
  // A group's jobs are spread over windows at enqueue: written before the fleet is up (--early),
  // the windows that pass while it starts leave their jobs overdue together when it comes.
  if (EARLY) await enqueue();
  const what = GROUP_MODE ? 'per group (one group)' : 'per queue';
  progress(`${backlog} jobs; ${WORKERS} workers, ${LIMIT} per ${INTERVAL_MS} ms ${what}, for ${DURATION_S} s`);
  const env = { MYSQL_URL: bench.url, LOG_LEVEL: 'warn' };
  const args = ['--import', 'tsx', ...SLUICE_CLI, 'work', '--queues', QUEUE, '--concurrency', '10'];
  const fleet = await startFleet(WORKERS, [...args, '--jobs', JOBS_DIR, '--prefix', bench.prefix], env);
  if (!EARLY) await enqueue();
  await measureWithFleet(fleet, 'workers', () => sleep(DURATION_S * 1_000));
  const result = {
    mode: GROUP_MODE ? 'group' : 'queue',
    early: EARLY,
    workers: WORKERS,
    limit: LIMIT,
    intervalMs: INTERVAL_MS,
    starts: await perWindow('started_ms'),
    claims: await perWindow('claimed_ms'),
  };
  const row = (what: string, w: Windows) => [
    what,
    String(w.full),
    String(w.total),
    String(LIMIT * w.full),
    w.mean.toFixed(2),
    String(w.min),
    String(w.max),
    String(w.over),
  ];
  process.stdout.write(
    `${table(
      ['counted by', 'full windows', 'total', 'ideal', 'mean/window', 'min', 'max', 'windows over limit'],
      [row('handler start (its clock)', result.starts), row('claim (DB clock)', result.claims)],
    )}\n${JSON.stringify(result)}\n`,
  );
} finally {
  await bench.close();
}

interface Windows {
  readonly full: number;
  readonly total: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
  readonly over: number;
}

/** Starts (or claims) per window of `column`, the first and last, partial, windows left out. */
async function perWindow(column: 'started_ms' | 'claimed_ms'): Promise<Windows> {
  const [rows] = await bench.conn.query<RowDataPacket[]>(
    `SELECT FLOOR(${column} / ?) AS w, COUNT(*) AS n FROM rate_starts GROUP BY w ORDER BY w`,
    [INTERVAL_MS],
  );
  const full = rows.slice(1, -1).map((r) => Number(r.n));
  const total = full.reduce((a, b) => a + b, 0);
  return {
    full: full.length,
    total,
    mean: full.length === 0 ? 0 : total / full.length,
    min: Math.min(...full),
    max: Math.max(...full),
    over: full.filter((n) => n > LIMIT).length,
  };
}
