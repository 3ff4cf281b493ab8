/**
 * `npm run bench -- connections [--concurrency 50] [--jobs 3000]`: the server connections one
 * process of each kind holds, for the table in docs/operating.md ("Connection budget"). Each
 * process runs alone on a database of its own (BENCH_DATABASE, default sluice_bench_connections,
 * re-created); its connections are the PROCESSLIST rows of that database, sampled every 25 ms:
 * - `sluice work` for each job of bench/budgetJobs (no database use, a statement through ctx.knex,
 *   exactly-once): idle once started, busy (the most at once) while it drains a batch, idle again;
 * - `sluice maintenance` over a backlog, for 20 s;
 * - `sluice dashboard` while 4 clients fetch its pages, and idle after;
 * - an application: 100 `enqueue` calls at once, then idle.
 * "Idle" is sampled after IDLE_MS, once the pools have closed what sat unused. Prints one JSON object.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice } from '../src/index.ts';
import { SLUICE_CLI } from './sourceCli.ts';

/** Past the pools' 10 s idle timeout (and a tick of their reaper). */
const IDLE_MS = 12_000;
const JOBS_FOLDER = fileURLToPath(new URL('./budgetJobs', import.meta.url));

const { values } = parseArgs({
  options: { concurrency: { type: 'string', default: '50' }, jobs: { type: 'string', default: '3000' } },
});
const concurrency = Number(values.concurrency);
const jobs = Number(values.jobs);
const server = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
const database = process.env.BENCH_DATABASE ?? 'sluice_bench_connections';
const url = new URL(server);
url.pathname = `/${database}`;
const logger = pino({ level: 'warn' }, pino.destination(2));

const admin = await mysql.createConnection({ uri: server.toString() });
await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
await admin.query(`CREATE DATABASE \`${database}\``);
const app = () => createSluice({ url: url.toString(), logger });
const migrating = app();
await migrating.migrate();
await migrating.close();

async function held(): Promise<number> {
  const [rows] = await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ?', [database]);
  return Number((rows as { n: number }[])[0]?.n);
}

async function mostOver(ms: number): Promise<number> {
  let most = 0;
  for (const end = Date.now() + ms; Date.now() < end; await sleep(25)) most = Math.max(most, await held());
  return most;
}

async function jobsLeft(): Promise<number> {
  const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM \`${database}\`.sluice_jobs`);
  return Number((rows as { n: number }[])[0]?.n);
}

async function enqueue(name: string, count: number): Promise<void> {
  const sluice = app();
  await sluice.enqueueBatch(Array.from({ length: count }, () => ({ name, queue: 'budget', payload: {} })));
  await sluice.close();
}

/** `sluice <args>` from the sources, ready (its IPC 'ready'), its stdout kept for the dashboard's port. */
async function start(args: string[]): Promise<{ child: ChildProcess; stdout: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...SLUICE_CLI, ...args], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    env: { ...process.env, MYSQL_URL: url.toString(), LOG_LEVEL: 'info' },
  });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.on('message', (message) => message === 'ready' && resolve());
    child.on('exit', (code) => reject(new Error(`sluice ${args.join(' ')} exited with ${code} before it was ready`)));
  });
  return { child, stdout: () => stdout };
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

const report: Record<string, Record<string, number>> = {};

for (const job of ['noop', 'query', 'exactlyOnce']) {
  const { child } = await start([
    'work',
    '--queues',
    'budget',
    '--concurrency',
    String(concurrency),
    '--jobs',
    JOBS_FOLDER,
  ]);
  await sleep(IDLE_MS);
  const idle = await mostOver(3_000);
  await enqueue(job, jobs);
  let busy = 0;
  while ((await jobsLeft()) > 0) busy = Math.max(busy, await mostOver(100));
  await sleep(IDLE_MS);
  const idleAfter = await mostOver(3_000);
  await stop(child);
  report[`work --concurrency ${concurrency}, ${job} jobs`] = { idle, busy, idleAfter };
}

{
  await enqueue('noop', jobs);
  const { child } = await start(['maintenance']);
  const busy = await mostOver(20_000);
  await stop(child);
  report.maintenance = { busy };
}

{
  const { child, stdout } = await start(['dashboard', '--port', '0', '--no-auth']);
  let port = '';
  while (port === '') {
    port = /"port":(\d+)/.exec(stdout())?.[1] ?? '';
    await sleep(50);
  }
  let browsing = true;
  const pages = ['/', '/queues', '/jobs', '/dead', '/workers'];
  const clients = Array.from({ length: 4 }, async (_, i) => {
    while (browsing) await (await fetch(`http://127.0.0.1:${port}${pages[i % pages.length]}`)).arrayBuffer();
  });
  const busy = await mostOver(10_000);
  browsing = false;
  await Promise.all(clients);
  await sleep(IDLE_MS);
  const idleAfter = await mostOver(3_000);
  await stop(child);
  report['dashboard, 4 clients'] = { busy, idleAfter };
}

{
  const sluice = app();
  let enqueuing = true;
  const calls = Array.from({ length: 100 }, async () => {
    while (enqueuing) await sluice.enqueue({ name: 'noop', queue: 'budget', payload: {} });
  });
  const busy = await mostOver(5_000);
  enqueuing = false;
  await Promise.all(calls);
  await sleep(IDLE_MS);
  const idleAfter = await mostOver(3_000);
  await sluice.close();
  report['application, 100 enqueue calls at once'] = { busy, idleAfter };
}

process.stdout.write(`${JSON.stringify(report, null, 1)}\n`);
await admin.query(`DROP DATABASE \`${database}\``);
await admin.end();
