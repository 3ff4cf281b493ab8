/**
 * Page load times of the dashboard on a queue of 1,000,000 jobs (`npm run bench -- dashboard`).
 *
 * The dashboard is mounted in an http server on 127.0.0.1 as an app would mount it; each page is
 * fetched over HTTP (request to last byte, authenticated) once to warm up, then RUNS times; the
 * table shows the median and the slowest. Beside each page runs its raw-SQL ceiling in the same
 * run: the one hand-written statement that answers the page's main question (the ratio says what
 * the page costs over it); for the overview, the exact per-queue count a dashboard without
 * bounded counts would run (one pass over the live table), which the page should beat. Last, where
 * Chromium is installed, each page's load in a real browser (browserLoad.ts: median of 5
 * navigations after a warm-up, request start to the load event).
 * Prints a table and, last, one JSON line.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basicAuth, defineJob, type Sluice } from 'sluice';
import { browserLoadTimes } from './browserLoad.ts';
import { LIVE_JOBS, loadData, openDashboardBench } from './dashboardData.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';

const RUNS = 9;
const USER = 'bench';
const PASSWORD = 'bench-password';

interface Probe {
  readonly page: string;
  readonly path: string;
  /** The raw-SQL ceiling: one statement answering the page's main question. */
  readonly raw: string;
  readonly rawParams?: unknown[];
}

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  await fn();
  const out: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn();
    out.push(performance.now() - start);
  }
  return out;
}

function probes(sluice: Sluice, someId: number): Probe[] {
  const t = sluice.tables;
  return [
    {
      page: 'overview',
      path: '/',
      // No one statement answers the overview: its ceiling is the exact per-queue, per-state count
      // a dashboard without bounded counts runs (one pass over the live table).
      raw: `SELECT queue, SUM(lock_id = '' AND run_at <= NOW(3)), SUM(lock_id = '' AND run_at > NOW(3)), SUM(lock_id <> '') FROM ${t.jobs} GROUP BY queue`,
    },
    {
      page: 'queue (waiting)',
      path: '/queues/mail',
      raw: `SELECT id FROM ${t.jobs} WHERE queue = 'mail' AND lock_id = '' AND priority = 0 AND run_at <= NOW(3) ORDER BY priority, run_at, id LIMIT 51`,
    },
    {
      page: 'jobs (live)',
      path: '/jobs',
      raw: `SELECT id FROM ${t.jobs} WHERE queue = 'billing' AND lock_id = '' ORDER BY priority, run_at, id LIMIT 51`,
    },
    {
      page: 'jobs (delayed, mail)',
      path: '/jobs?state=delayed&queue=mail',
      raw: `SELECT id FROM ${t.jobs} WHERE queue = 'mail' AND lock_id = '' AND priority = 0 AND run_at > NOW(3) ORDER BY priority, run_at, id LIMIT 51`,
    },
    {
      page: 'jobs (name filter)',
      path: '/jobs?queue=reports&state=waiting&name=charge',
      raw: `SELECT id FROM ${t.jobs} WHERE queue = 'reports' AND lock_id = '' AND name = 'charge' AND priority = 0 ORDER BY priority, run_at, id LIMIT 51`,
    },
    {
      page: 'jobs (completed)',
      path: '/jobs?state=completed',
      raw: `SELECT job_id FROM ${t.jobHistory} ORDER BY finished_at DESC LIMIT 51`,
    },
    { page: 'job detail', path: `/jobs/${someId}`, raw: `SELECT * FROM ${t.jobs} WHERE id = ?`, rawParams: [someId] },
    { page: 'dead jobs', path: '/dead', raw: `SELECT id FROM ${t.deadJobs} ORDER BY failed_at DESC LIMIT 51` },
    {
      page: 'workers',
      path: '/workers',
      raw: `SELECT id FROM ${t.jobs} WHERE queue = 'mail' AND lock_id > '' LIMIT 1000`,
    },
    { page: 'batches', path: '/batches', raw: `SELECT COUNT(*) FROM ${t.jobs} WHERE batch_id = 20` },
    { page: 'schedules', path: '/schedules', raw: `SELECT 1` },
  ];
}

async function main(): Promise<void> {
  const { sluice } = await openDashboardBench();
  progress(`loading ${fmt(LIVE_JOBS)} live jobs (plus history, dead jobs, batches)`);
  await loadData(sluice);
  const nightly = defineJob({ name: 'nightly', queue: 'reports', schedule: '0 3 * * *', handle: () => undefined });
  const handler = sluice.dashboard({ auth: basicAuth({ user: USER, password: PASSWORD }), jobs: [nightly] });
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const authorization = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const rows: {
    page: string;
    medianMs: number;
    maxMs: number;
    rawMs: number;
    ratio: number;
    bytes: number;
    browserMs?: number | null;
  }[] = [];
  try {
    const [[middle]] = (await sluice.knex.raw(
      `SELECT id FROM ${sluice.tables.jobs} WHERE id >= ? ORDER BY id LIMIT 1`,
      [LIVE_JOBS / 2],
    )) as [[{ id: number }]];
    const jobId = Number(middle.id);
    for (const probe of probes(sluice, jobId)) {
      let bytes = 0;
      const page = await time(async () => {
        const response = await fetch(`${base}${probe.path}`, { headers: { authorization } });
        const body = await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`${probe.path}: HTTP ${response.status}`);
        bytes = body.byteLength;
      });
      const raw = await time(() => sluice.knex.raw(probe.raw, (probe.rawParams ?? []) as never[]));
      const row = {
        page: probe.page,
        medianMs: median(page),
        maxMs: Math.max(...page),
        rawMs: median(raw),
        ratio: median(page) / median(raw),
        bytes,
      };
      rows.push(row);
      progress(`  ${probe.page}: ${row.medianMs.toFixed(1)} ms (raw ${row.rawMs.toFixed(2)} ms)`);
    }
    progress('browser: Chromium navigations (load event)');
    const inBrowser = await browserLoadTimes(
      probes(sluice, jobId).map((p) => `${base}${p.path}`),
      { username: USER, password: PASSWORD },
      5,
    );
    rows.forEach((row, i) => {
      row.browserMs = inBrowser ? (inBrowser[i] ?? null) : null;
    });
    process.stdout.write(
      `\nDashboard page loads on ${fmt(LIVE_JOBS)} live jobs (HTTP, authenticated; median and slowest of ${RUNS} after a warm-up)\n\n`,
    );
    process.stdout.write(
      `${table(
        ['page', 'median ms', 'max ms', 'raw SQL ms', 'page / raw', 'KiB', 'browser ms'],
        rows.map((r) => [
          r.page,
          r.medianMs.toFixed(1),
          r.maxMs.toFixed(1),
          r.rawMs.toFixed(2),
          r.ratio.toFixed(1),
          (r.bytes / 1024).toFixed(1),
          r.browserMs === null || r.browserMs === undefined ? 'n/a' : r.browserMs.toFixed(1),
        ]),
      )}\n\n`,
    );
    process.stdout.write(
      `${JSON.stringify({ bench: 'dashboardLoad', liveJobs: LIVE_JOBS, runs: RUNS, pages: rows })}\n`,
    );
  } finally {
    server.closeAllConnections();
    server.close();
    await sluice.close();
  }
}

await main();
