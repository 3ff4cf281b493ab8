/**
 * `npm run bench -- shape [--small]` (bench/README.md "The shape of an install"): what every
 * background pass, page, scrape, ring and claim costs on an install of many queues, groups and
 * graphs (shapeData.ts builds it), beside the same on a one-queue install, in one run. Per
 * operation: statements, rows read, time and heap (shapeMeter.ts), against the targets of issue 42:
 * a maintenance task ≤ 1 s, a page, the scrape and `sluice stats` ≤ 20 statements and ≤ 250 ms, a
 * claim across 1,000 queues ≥ 0.8× the one-queue rate. Prints a table, then one JSON line.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createConnection } from 'mysql2/promise';
import { pino } from 'pino';
import { createSluice, defineJob, type Sluice, SluiceMetrics } from 'sluice';
import { readStats } from '../src/cli/statsCommand.ts';
import { connect } from '../src/db/connect.ts';
import { Ringer } from '../src/wakeups/Ringer.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { buildOneQueue, buildShape, FULL, type ShapeCounts, type ShapeIds, SMALL } from './shapeData.ts';
import { type Cost, measure } from './shapeMeter.ts';

const { values } = parseArgs({ options: { small: { type: 'boolean', default: false } } });
const counts: ShapeCounts = values.small ? SMALL : FULL;
const database = process.env.BENCH_DATABASE ?? 'sluice_bench_shape';
const server = new URL(process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test');
const url = new URL(server);
url.pathname = `/${database}`;
const logger = pino({ level: 'error' }, pino.destination(2));
/** Jobs the claim rows drain, and the queues they are spread over on the shape. */
const CLAIM_JOBS = values.small ? 2_000 : 10_000;
const CLAIM_QUEUES = 1_000;
/** Drains of the claim row on each install, in turn (its rate is their median: one drain is under a second). */
const CLAIM_ROUNDS = 3;
const RING_QUEUES = 3_000;
const DISTINCT_QUEUES = values.small ? 5_000 : 50_000;
const claimJob = defineJob({ name: 'shape-claim', handle: () => undefined });

interface Row {
  readonly what: string;
  readonly kind: 'maintenance' | 'page' | 'ring' | 'claim' | 'memory';
  shape?: Cost;
  one?: Cost;
  /** Claim rows: jobs/s on each install. */
  shapeRate?: number;
  oneRate?: number;
}

type Install = 'shape' | 'one';

async function open(prefix: string): Promise<Sluice> {
  // A pool of one: every statement of the install's reads runs on the connection the meter reads.
  const sluice = createSluice({ url: url.toString(), tablePrefix: prefix, poolMax: 1, logger });
  await sluice.migrate();
  return sluice;
}

function put(rows: Row[], install: Install, what: string, kind: Row['kind'], cost: Cost, rate?: number): void {
  let row = rows.find((r) => r.what === what);
  if (!row) {
    row = { what, kind };
    rows.push(row);
  }
  row[install] = cost;
  progress(
    `  ${install} ${what}: ${cost.statements} statements, ${cost.rowsRead ?? 'n/a'} rows, ${cost.ms.toFixed(1)} ms`,
  );
  if (rate !== undefined) row[install === 'shape' ? 'shapeRate' : 'oneRate'] = rate;
}

async function measureInstall(rows: Row[], install: Install, sluice: Sluice, ids: ShapeIds | null): Promise<void> {
  const session = sluice.knex;
  progress(`${install}: maintenance tasks`);
  const maintenance = sluice.maintenance({});
  for (const task of maintenance.tasks)
    put(rows, install, `maintenance: ${task.name}`, 'maintenance', await measure(session, () => task.runOnce()));
  put(rows, install, 'maintenance: a whole pass', 'maintenance', await measure(session, () => maintenance.runOnce()));
  await maintenance.stop();

  progress(`${install}: pages, scrape, stats`);
  const handler = sluice.dashboard({ auth: false });
  const http = createServer(handler);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const queue = install === 'shape' ? 'q-05000' : 'default';
  const pages: [string, string][] = [
    ['overview', '/'],
    ['queue', `/queues/${queue}`],
    ['queue (group defaults)', install === 'shape' ? '/queues/g-000' : '/queues/default'],
    ['jobs', '/jobs'],
    ['jobs (held)', '/jobs?state=held'],
    ['dead jobs', '/dead'],
    ['workers', '/workers'],
    ['batches', '/batches'],
    ['schedules', '/schedules'],
    ['job (chain middle)', ids ? `/jobs/${ids.chainJob}` : '/jobs/1'],
    ['job (fan-out parent)', ids ? `/jobs/${ids.fanOutParent}` : '/jobs/2'],
    ['batch (fan-out)', ids ? `/batches/${ids.fanOutBatch}` : '/batches/1'],
  ];
  try {
    for (const [name, path] of pages) {
      // One untimed load first: what a page costs once its process is warm.
      const load = async () => {
        const response = await fetch(`${base}${path}`);
        await response.arrayBuffer();
        if (response.status >= 500) throw new Error(`${path}: HTTP ${response.status}`);
      };
      await load();
      put(rows, install, `page: ${name}`, 'page', await measure(session, load));
    }
  } finally {
    http.closeAllConnections();
    http.close();
  }
  const metrics = new SluiceMetrics(sluice, 0);
  await metrics.render();
  put(rows, install, 'metrics scrape', 'page', await measure(session, () => metrics.render()));
  await readStats(sluice, 10_000);
  put(rows, install, 'sluice stats', 'page', await measure(session, () => readStats(sluice, 10_000)));

  progress(`${install}: ring`);
  const ringKnex = connect({ url: url.toString(), poolMax: 1, logger });
  const ringed = new Map(
    Array.from({ length: install === 'shape' ? RING_QUEUES : 1 }, (_, n) => [
      install === 'shape' ? `q-${String(n).padStart(5, '0')}` : 'default',
      1,
    ]),
  );
  // A fresh ringer each time (its copy of the doorbells cold, as after a quiet spell): it holds its
  // connection between rings, and close() gives it back to the pool of one the meter reads.
  const ring = async () => {
    const ringer = new Ringer({ knex: ringKnex, tables: sluice.tables, events: sluice.events });
    ringer.ring(sluice.tables.prefix, ringed);
    await ringer.close();
  };
  await ring();
  const ringCost = await measure(ringKnex, ring);
  put(rows, install, `ring after a commit to ${fmt(RING_QUEUES)} queues (one: 1)`, 'ring', ringCost);
  await ringKnex.destroy();

  progress(`${install}: memory after ${fmt(DISTINCT_QUEUES)} queues enqueued to and rung`);
  const distinct = async () => {
    for (let base = 0; base < DISTINCT_QUEUES; base += 1_000)
      await sluice.enqueueBatch(
        Array.from({ length: 1_000 }, (_, n) => ({
          name: claimJob.name,
          queue: install === 'shape' ? `m-${base + n}` : 'm',
          payload: {},
        })),
      );
  };
  put(rows, install, `enqueue and ring: ${fmt(DISTINCT_QUEUES)} queues`, 'memory', await measure(null, distinct));
}

/** Drains rounds of the claim row, the installs in turn round after round; the median rate of each. */
async function measureClaims(rows: Row[], installs: readonly [Install, Sluice][]): Promise<void> {
  const rates = new Map<Install, number[]>();
  const costs = new Map<Install, Cost>();
  for (let round = 1; round <= CLAIM_ROUNDS; round++) {
    for (const [install, sluice] of installs) {
      progress(`${install}: claim, round ${round} of ${CLAIM_ROUNDS}`);
      const { cost, rate } = await drainClaimJobs(install, sluice);
      rates.set(install, [...(rates.get(install) ?? []), rate]);
      costs.set(install, cost);
    }
  }
  for (const [install] of installs) {
    const runs = rates.get(install) ?? [];
    progress(`  ${install} claim drains: ${runs.map((r) => fmt(r)).join(' / ')} jobs/s`);
    const what = `claim: drain ${fmt(CLAIM_JOBS)} jobs over ${fmt(CLAIM_QUEUES)} queues`;
    put(rows, install, what, 'claim', costs.get(install) as Cost, median(runs));
  }
}

/** One drain of CLAIM_JOBS jobs by one worker of concurrency 50: over CLAIM_QUEUES queues by name, or one. */
async function drainClaimJobs(install: Install, sluice: Sluice): Promise<{ cost: Cost; rate: number }> {
  const names = Array.from({ length: install === 'shape' ? CLAIM_QUEUES : 1 }, (_, n) =>
    install === 'shape' ? `w-${String(n).padStart(4, '0')}` : 'w',
  );
  await sluice.enqueueBatch(
    Array.from({ length: CLAIM_JOBS }, (_, n) => ({
      name: claimJob.name,
      queue: names[n % names.length] as string,
      payload: {},
    })),
  );
  const worker = sluice.worker({ queues: names, concurrency: 50, jobs: [claimJob] });
  let rate = 0;
  const cost = await measure(null, async () => {
    await worker.start();
    const started = performance.now();
    while (await jobsLeft(sluice, names)) await new Promise((resolve) => setTimeout(resolve, 5));
    rate = CLAIM_JOBS / ((performance.now() - started) / 1000);
    await worker.stop();
  });
  return { cost, rate };
}

/** Whether any of the claim rows' jobs is left (their queues' first name up to the last, by ix_head). */
async function jobsLeft(sluice: Sluice, names: readonly string[]): Promise<boolean> {
  const [rows] = (await sluice.knex.raw(`SELECT 1 FROM ${sluice.tables.jobs} WHERE queue BETWEEN ? AND ? LIMIT 1`, [
    names[0] as string,
    names[names.length - 1] as string,
  ])) as [unknown[]];
  return rows.length > 0;
}

function verdict(row: Row): string {
  const s = row.shape;
  if (!s) return '';
  if (row.kind === 'maintenance') return s.ms <= 1_000 ? 'ok' : 'MISS (> 1 s)';
  if (row.kind === 'page') return s.statements <= 20 && s.ms <= 250 ? 'ok' : 'MISS (> 20 st or > 250 ms)';
  if (row.kind === 'claim' && row.shapeRate && row.oneRate)
    return row.shapeRate / row.oneRate >= 0.8 ? `ok ${(row.shapeRate / row.oneRate).toFixed(2)}×` : 'MISS (< 0.8×)';
  return '';
}

const cell = (c: Cost | undefined) =>
  c ? [fmt(c.statements), c.rowsRead === null ? 'n/a' : fmt(c.rowsRead), c.ms.toFixed(1), fmt(c.heapKiB)] : [];

async function main(): Promise<void> {
  const admin = await createConnection({ uri: server.toString() });
  await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await admin.query(`CREATE DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  await admin.end();
  const shape = await open('shape_');
  const one = await open('one_');
  const rows: Row[] = [];
  try {
    const started = performance.now();
    const ids = await buildShape(shape, counts);
    await buildOneQueue(one, counts);
    progress(`built in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    await measureInstall(rows, 'shape', shape, ids);
    await measureInstall(rows, 'one', one, null);
    await measureClaims(rows, [
      ['shape', shape],
      ['one', one],
    ]);
  } finally {
    await shape.close();
    await one.close();
  }
  const head = ['operation', 'statements', 'rows read', 'ms', 'heap KiB'];
  process.stdout.write(
    `\nshape ${values.small ? '(--small)' : ''}: ${JSON.stringify(counts)}; one queue: ${fmt(counts.queues * counts.jobsPerQueue)} jobs\n\n`,
  );
  process.stdout.write(
    `${table(
      [...head, ...head.slice(1).map((h) => `one: ${h}`), 'target'],
      rows.map((r) => [r.what, ...cell(r.shape), ...cell(r.one), verdict(r)]),
    )}\n`,
  );
  for (const r of rows.filter((r) => r.kind === 'claim'))
    process.stdout.write(`${r.what}: ${fmt(r.shapeRate ?? 0)} jobs/s; one queue ${fmt(r.oneRate ?? 0)} jobs/s\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'shape', small: values.small, counts, rows })}\n`);
}

await main();
