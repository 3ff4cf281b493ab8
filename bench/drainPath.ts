/**
 * `npm run bench -- path`: where a drained job's database-server time goes. Each step of sluice's
 * drain path runs alone, over 100,000 no-op jobs, on one connection, in claims of 500 (what
 * `sluice work --concurrency 500` sends):
 *   claim            the random-head claim: head read, claim UPDATE, load of the claimed rows
 *   complete+history the fenced completion of whole claims, history on (copy to job_history,
 *                    delete, by the claim's lock_id; one commit)
 *   complete         the same, history off (one DELETE)
 * and, beside them, the raw ceiling's claim-and-delete (rawLoop.ts, 50 per claim) on the same
 * rows. For each step: wall time and the server process's CPU per job, read from /proc after a
 * settle pause so that InnoDB's background purge of what the step delete-marked is counted.
 * The CPU column needs the server on this machine (a mariadbd or mysqld process); otherwise it
 * reads n/a. Like `npm run bench`, it works in the database sluice_bench, re-created per run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { fromKnex } from '../src/db/executor.ts';
import { ClaimTokens } from '../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../src/worker/claims/completeJobs.ts';
import { type Bench, openBench, truncate } from './benchDatabase.ts';
import { progress } from './progress.ts';
import { rawInsertJobs } from './rawInsert.ts';
import { claimAndDelete } from './rawLoop.ts';
import { fmt, table } from './report.ts';
import { findServerPid, processCpuUs } from './serverCpu.ts';
import { BENCH_QUEUE, type BenchJob, makeJobs } from './workload.ts';

const JOB_COUNT = 100_000;
const CLAIM_SIZE = 500;
const RAW_BATCH = 50;
const HEAD_SIZE = 200;
/** After each step: long enough for purge to catch up with 100,000 delete-marked rows here. */
const SETTLE_MS = 3_000;

interface Step {
  readonly step: string;
  readonly wallUsPerJob: number;
  readonly serverCpuUsPerJob: number | null;
}

interface Claim {
  readonly lockId: string;
  readonly ids: number[];
}

async function main(): Promise<void> {
  const bench = await openBench();
  try {
    const serverPid = findServerPid();
    progress(
      `server ${bench.server.version}; CPU read from ${serverPid === null ? 'nowhere (no local server process): n/a' : `pid ${serverPid}`}`,
    );
    const jobs = makeJobs(JOB_COUNT);
    const db = fromKnex(bench.sluice.knex, { readCommitted: true });
    const { tables } = bench.sluice;
    const tokens = new ClaimTokens();
    const claimAll = async (claims: Claim[]) => {
      for (;;) {
        const lockId = tokens.next();
        const rows = await claimRandomHead(db, tables, {
          queue: BENCH_QUEUE,
          priorities: [0],
          want: CLAIM_SIZE,
          lockId,
          headSize: HEAD_SIZE,
        });
        if (rows.length === 0) return;
        claims.push({ lockId, ids: rows.map((r) => Number(r.id)) });
      }
    };
    const steps: Step[] = [];
    // Each claim completes whole, as the worker's no-op drain does: by (queue, lock_id).
    const wholeClaimOf = BENCH_QUEUE;

    await refill(bench, jobs);
    const claims: Claim[] = [];
    steps.push(await measure('claim (head, UPDATE, load)', serverPid, () => claimAll(claims)));
    steps.push(
      await measure('complete, history on', serverPid, async () => {
        for (const c of claims) await completeJobs(db, tables, c.lockId, c.ids, { history: true, wholeClaimOf });
      }),
    );

    await refill(bench, jobs);
    const again: Claim[] = [];
    await claimAll(again);
    steps.push(
      await measure('complete, history off', serverPid, async () => {
        for (const c of again) await completeJobs(db, tables, c.lockId, c.ids, { history: false, wholeClaimOf });
      }),
    );

    await truncate(bench.conn, [bench.tables.raw]);
    await rawInsertJobs(bench.conn, bench.tables.raw, jobs, 5_000);
    steps.push(
      await measure(`raw claim-and-delete (${RAW_BATCH} per claim)`, serverPid, async () => {
        while ((await claimAndDelete(bench.conn, bench.tables.raw, BENCH_QUEUE, RAW_BATCH)) > 0);
      }),
    );

    process.stdout.write(
      `${render(steps)}\n${JSON.stringify({ claimSize: CLAIM_SIZE, rawBatch: RAW_BATCH, jobs: JOB_COUNT, steps })}\n`,
    );
  } finally {
    await bench.close();
  }
}

async function refill(bench: Bench, jobs: readonly BenchJob[]): Promise<void> {
  await truncate(bench.conn, [
    bench.tables.jobs,
    bench.tables.batches,
    bench.tables.jobHistory,
    bench.tables.jobTraces,
  ]);
  await bench.sluice.enqueueBatch(jobs);
}

async function measure(step: string, serverPid: number | null, run: () => Promise<void>): Promise<Step> {
  await sleep(SETTLE_MS);
  const cpuBefore = processCpuUs(serverPid);
  const started = performance.now();
  await run();
  const wallUs = (performance.now() - started) * 1000;
  await sleep(SETTLE_MS);
  const cpuAfter = processCpuUs(serverPid);
  const result = {
    step,
    wallUsPerJob: round1(wallUs / JOB_COUNT),
    serverCpuUsPerJob: cpuBefore === null || cpuAfter === null ? null : round1((cpuAfter - cpuBefore) / JOB_COUNT),
  };
  progress(`${step}: wall ${result.wallUsPerJob} µs/job, server CPU ${result.serverCpuUsPerJob ?? 'n/a'} µs/job`);
  return result;
}

function render(steps: readonly Step[]): string {
  const rows = steps.map((s) => [
    s.step,
    String(s.wallUsPerJob),
    s.serverCpuUsPerJob === null ? 'n/a' : String(s.serverCpuUsPerJob),
    s.wallUsPerJob > 0 ? fmt(1e6 / s.wallUsPerJob) : '-',
  ]);
  return [
    `drain path, step by step: ${fmt(JOB_COUNT)} jobs, claims of ${CLAIM_SIZE}, one connection; server CPU includes the purge after each step`,
    table(['step', 'wall µs/job', 'server CPU µs/job', 'jobs/s alone'], rows),
  ].join('\n');
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

await main();
