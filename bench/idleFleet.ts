/**
 * `npm run bench -- idle [--base DIR] [--workers 20] [--seconds 30] [--settle 15]`:
 * what an idle fleet costs the database. N real `sluice work` processes (default options:
 * concurrency 10, polling backed off to maxPollIntervalMs, heartbeats every 2 s, and — after
 * issue 17 — one doorbell connection each asleep in SELECT SLEEP(30)) wait on an empty queue;
 * after `settle` seconds (start-up and the poll back-off over), for `seconds`: the statements the
 * fleet sent (counted in each process by the statementCounter preload, inside that window) and the
 * server CPU of the threads serving the fleet's connections (MariaDB's PROCESSLIST.TID, utime +
 * stime from /proc: the fleet's own cost, apart from anyone else using a shared server).
 * With --base, the other checkout's fleet is measured first, the same way, on its own prefix.
 * Prints a table and one JSON line; figures per worker and extrapolated to 100 workers (linear:
 * every worker sends the same statements).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { type Connection, createConnection } from 'mysql2/promise';
import { migrateSide, type Side, sideCli, sidesOf, withScratchDatabase } from './abSide.ts';
import { measureWithFleet, startFleet } from './processFleet.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { connectionThreadsCpuUs, findServerPid, threadsCpuDeltaUs } from './serverCpu.ts';
import { sumStatementCounts } from './statementCounter.ts';

export interface IdleCost {
  readonly side: string;
  readonly workers: number;
  readonly seconds: number;
  /** Server CPU over the window, as a fraction of one core (null: server not local). */
  readonly serverCpuCore: number | null;
  readonly queriesPerSec: number;
  readonly per100Workers: { readonly serverCpuCore: number | null; readonly queriesPerSec: number };
}

export async function measureIdleFleet(
  side: Side,
  url: string,
  workers: number,
  seconds: number,
  settleSeconds: number,
): Promise<IdleCost> {
  const args = [...sideCli(side, 'work'), '--queues', 'idle', '--jobs', `${side.root}/bench/jobs`];
  const counter = new URL('./statementCounter.ts', import.meta.url).pathname;
  args.splice(2, 0, '--import', counter);
  const statementsDir = mkdtempSync(join(tmpdir(), 'sluice-idle-'));
  const from = Date.now() + settleSeconds * 1000;
  const env = {
    LOG_LEVEL: 'warn',
    MYSQL_URL: url,
    BENCH_STATEMENTS_DIR: statementsDir,
    BENCH_STATEMENTS_WINDOW: `${from},${from + seconds * 1000}`,
  };
  const conn = await createConnection({ uri: url });
  try {
    const fleet = await startFleet(workers, args, env);
    const serverCpuUs = await measureWithFleet(fleet, `${side.label} idle fleet`, async () => {
      await sleep(from - Date.now());
      const pid = findServerPid();
      const start = await connectionThreadsCpuUs(query(conn), pid, database(url));
      await sleep(seconds * 1000);
      const end = await connectionThreadsCpuUs(query(conn), pid, database(url));
      return start && end ? threadsCpuDeltaUs(start, end) : null;
    });
    const files = readdirSync(statementsDir).map((f) => join(statementsDir, f));
    const statements = Object.values(sumStatementCounts(files)).reduce((a, b) => a + b, 0);
    const serverCpuCore = serverCpuUs === null ? null : serverCpuUs / 1e6 / seconds;
    const queriesPerSec = statements / seconds;
    const scale = 100 / workers;
    return {
      side: side.label,
      workers,
      seconds,
      serverCpuCore,
      queriesPerSec,
      per100Workers: {
        serverCpuCore: serverCpuCore === null ? null : serverCpuCore * scale,
        queriesPerSec: queriesPerSec * scale,
      },
    };
  } finally {
    await conn.end();
    rmSync(statementsDir, { recursive: true, force: true });
  }
}

const query = (conn: Connection) => async (sql: string, params: unknown[]) =>
  (await conn.query(sql, params))[0] as { TID: number }[];

const database = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      base: { type: 'string' },
      workers: { type: 'string', default: '20' },
      seconds: { type: 'string', default: '30' },
      settle: { type: 'string', default: '15' },
    },
  });
  await withScratchDatabase('idle', async (url) => {
    const results: IdleCost[] = [];
    for (const side of sidesOf(v.base, 'idle')) {
      migrateSide(side, url);
      progress(`idle fleet: ${side.label}: ${v.workers} workers, settle ${v.settle} s, measure ${v.seconds} s`);
      results.push(await measureIdleFleet(side, url, Number(v.workers), Number(v.seconds), Number(v.settle)));
    }
    process.stdout.write(`${renderIdleCost(results)}\n${JSON.stringify({ idleFleet: results.map(roundIdle) })}\n`);
  });
}

export function renderIdleCost(results: readonly IdleCost[]): string {
  const pct = (core: number | null) => (core === null ? 'n/a' : `${(core * 100).toFixed(2)} %`);
  return [
    `idle fleet: database cost of idle \`sluice work\` processes (default options) on an empty queue; server CPU (of the fleet's connections) in % of one core; queries counted client-side`,
    table(
      ['side', 'workers', 'server CPU', 'queries/s', 'per 100 workers: CPU', 'queries/s'],
      results.map((r) => [
        r.side,
        String(r.workers),
        pct(r.serverCpuCore),
        fmt(r.queriesPerSec),
        pct(r.per100Workers.serverCpuCore),
        fmt(r.per100Workers.queriesPerSec),
      ]),
    ),
  ].join('\n');
}

export function roundIdle(r: IdleCost) {
  const r3 = (n: number | null) => (n === null ? null : Math.round(n * 1000) / 1000);
  return {
    side: r.side,
    workers: r.workers,
    seconds: Math.round(r.seconds),
    serverCpuCore: r3(r.serverCpuCore),
    queriesPerSec: Math.round(r.queriesPerSec * 10) / 10,
    per100Workers: {
      serverCpuCore: r3(r.per100Workers.serverCpuCore),
      queriesPerSec: Math.round(r.per100Workers.queriesPerSec),
    },
  };
}

if (process.argv[1] === new URL(import.meta.url).pathname) await main();
