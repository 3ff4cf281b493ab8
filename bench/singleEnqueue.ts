/**
 * Single-job enqueue: ENQUEUERS producer processes per system, each enqueuing one job per call and
 * awaiting it (the way an application enqueues per request), for a few seconds, started together;
 * jobs/s over all of them (peers/peerEnqueueChild.ts). Every system of the grid, the raw loop's row
 * being a raw autocommit INSERT of the same row: the floor of one durable enqueue on that server.
 * Each with no consumer on the queue, and while DRAINING_PROCESSES consumer processes of its own
 * kind (concurrency 50, the grid's settings) drain it as it fills. For sluice and the raw INSERT
 * (the metered systems), what the server did per job enqueued in the window (serverCounters.ts):
 * statements, KILLs (wake-ups), redo flushes and fsyncs, server CPU.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { Bench } from './benchDatabase.ts';
import { errorMessage } from './errorMessage.ts';
import type { GridSystem, SystemKey } from './gridSystems.ts';
import { type JobCpu, jobCpu } from './jobCpu.ts';
import type { RunningConsumers } from './peers/consumerChild.ts';
import { progress } from './progress.ts';
import { quietHost } from './quietHost.ts';
import { type ServerCost, serverMeter } from './serverCounters.ts';
import { serverProcessesMeter } from './serverCpu.ts';

export const ENQUEUERS = 8;
export const DRAINING_PROCESSES = 2;
/**
 * Rounds of the idle sluice and raw INSERT rows, taken in turn: one round each on this shared host
 * put sluice at 0.83 and 0.92 of the raw INSERT in two runs of the same code an hour apart, while
 * four interleaved rounds of `npm run bench -- ratio` gave 0.91–0.96. The row shows the median round.
 */
export const PAIRED_ROUNDS = 3;
/**
 * Calls each producer makes before the window, every system alike: an application enqueues from a
 * process that has been serving for hours, so the window times the steady state, not a cold start
 * (JIT, pool and connection warm-up; a few hundred calls of it at these rates).
 */
export const WARM_CALLS = 500;
const DRAINING_CONCURRENCY = 50;
const QUIET_GIVE_UP_MS = 3_000;
/**
 * Longest wait for a quiet host before the section's first window: the bulk enqueue before it
 * leaves the server flushing and purging 110,000 rows for longer than QUIET_GIVE_UP_MS, and the
 * first system timed (sluice) paid for it: 0.49 of the raw INSERT in a run whose host was still
 * 84 % busy after 3 s, against 0.84–0.88 in interleaved rounds of `npm run bench -- ratio` just after.
 */
const SECTION_QUIET_GIVE_UP_MS = 60_000;
/** How long an enqueuer may take to start and warm up (ENQUEUE_WARM_SECONDS, 5 s, of it) before it is killed: eight sluice producers took over 60 s to start on a host at load 26. */
const READY_TIMEOUT_MS = 180_000;
/** How long past its window an enqueuer may take to answer (its last call under way) before it is killed. */
const ANSWER_GRACE_MS = 60_000;
const CHILD = fileURLToPath(new URL('./peers/peerEnqueueChild.ts', import.meta.url));

export interface SingleEnqueueRow {
  readonly system: SystemKey;
  /** Consumer processes draining the queue meanwhile (0: none). */
  readonly workers: number;
  /** null when the measurement failed; the median round's when there were several (PAIRED_ROUNDS). */
  readonly jobsPerSec: number | null;
  /** Every round's rate, when there were several. */
  readonly rounds?: readonly number[];
  /** Per job enqueued in the window, metered systems only (the draining consumers' own work included). */
  readonly cost?: ServerCost | null;
  /** CPU per job: the producers', and the server processes' (the draining consumers' statements included). */
  readonly cpu?: JobCpu | null;
  readonly error?: string;
}

export async function measureSingleEnqueue(
  bench: Bench,
  systems: readonly GridSystem[],
  seconds: number,
): Promise<SingleEnqueueRow[]> {
  const rows: SingleEnqueueRow[] = [];
  await quietHost('single enqueue', SECTION_QUIET_GIVE_UP_MS);
  for (const workers of [0, DRAINING_PROCESSES]) {
    // Idle, sluice and the raw INSERT take turns (the order flips each round): their ratio is the verdict.
    const paired = workers === 0 ? systems.filter((s) => s.key === 'sluice' || s.key === 'raw') : [];
    const rounds = paired.length === 2 ? PAIRED_ROUNDS : 1;
    const runs = new Map<SystemKey, Measured[]>();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? systems : [...systems].reverse();
      for (const system of order) {
        if (round > 0 && !paired.includes(system)) continue;
        const label = `single enqueue ×${ENQUEUERS} ${system.peer.name}, ${workers} consumers draining${rounds > 1 && paired.includes(system) ? `, round ${round + 1}/${rounds}` : ''}`;
        const done = runs.get(system.key) ?? [];
        runs.set(system.key, done);
        try {
          const measured = await measureOne(bench, system, workers, seconds);
          const { jobsPerSec, cost } = measured;
          const perJob = cost
            ? `; ${cost.questions.toFixed(2)} statements, ${cost.redoFlushes.toFixed(2)} redo flushes per job`
            : '';
          progress(`${label}: ${Math.round(jobsPerSec)} jobs/s${perJob}`);
          done.push(measured);
        } catch (error) {
          progress(`${label}: failed: ${errorMessage(error)}`);
          done.push({ error: errorMessage(error) });
        }
        await system.peer.clear().catch(() => undefined);
      }
    }
    for (const system of systems) rows.push(rowOf(system.key, workers, runs.get(system.key) ?? []));
  }
  return rows;
}

type Timed = Awaited<ReturnType<typeof measureOne>>;
type Measured = Timed | { error: string };

/** A system's row from its rounds: the round of the median rate (its cost and CPU with it), every rate kept; failed if any failed. */
function rowOf(system: SystemKey, workers: number, runs: readonly Measured[]): SingleEnqueueRow {
  const failed = runs.find((r): r is { error: string } => 'error' in r);
  if (failed || runs.length === 0) return { system, workers, jobsPerSec: null, error: failed?.error ?? 'not measured' };
  const timed = runs as readonly Timed[];
  const mid = [...timed].sort((a, b) => a.jobsPerSec - b.jobsPerSec)[Math.floor((timed.length - 1) / 2)] as Timed;
  return {
    system,
    workers,
    jobsPerSec: mid.jobsPerSec,
    ...(timed.length > 1 ? { rounds: timed.map((r) => r.jobsPerSec) } : {}),
    ...(mid.cost ? { cost: mid.cost } : {}),
    cpu: mid.cpu,
  };
}

/** One row of measureSingleEnqueue: `system`'s ENQUEUERS producers for `seconds`, `workers` consumers draining. */
export async function measureOne(
  bench: Bench,
  system: GridSystem,
  workers: number,
  seconds: number,
  /** Calls each producer makes before the window (at most 5 s of them: peerEnqueueChild.ts). */
  warmCalls = WARM_CALLS,
  /** Producer processes, callers at once in each (ENQUEUE_CALLERS), and more of the producers' environment (BENCH_OTEL). */
  shape: { readonly processes?: number; readonly callers?: number; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<{ jobsPerSec: number; cost: ServerCost | null; cpu: JobCpu | null }> {
  await system.peer.clear();
  const setting = system.settingFor({ payload: 'small', processes: workers, concurrency: DRAINING_CONCURRENCY });
  const consumers: RunningConsumers | null = workers > 0 ? await system.peer.consume(setting) : null;
  const meter = system.metered ? serverMeter(bench.conn, new URL(bench.url).pathname.slice(1)) : null;
  const server = serverProcessesMeter(system.serverProcesses, meter?.window);
  let timed: Awaited<ReturnType<typeof timeEnqueuers>>;
  try {
    // What the previous step left the server doing (flushing, purging) stays out of this window.
    await quietHost(`single enqueue ${system.key}`, QUIET_GIVE_UP_MS);
    timed = await timeEnqueuers(
      [CHILD, system.key, String(seconds), bench.tables.raw],
      {
        MYSQL_URL: bench.url,
        ENQUEUE_WARM_CALLS: String(warmCalls),
        ENQUEUE_CALLERS: String(shape.callers ?? 1),
        ...shape.env,
      },
      shape.processes ?? ENQUEUERS,
      seconds,
      server.window,
    );
  } catch (error) {
    await consumers?.stop().catch(() => undefined);
    throw error;
  }
  await consumers?.stop();
  return {
    jobsPerSec: timed.jobsPerSec,
    cost: meter?.cost(timed.jobs) ?? null,
    cpu: jobCpu(timed.jobs, timed.clientCpuUs, server.usedUs()),
  };
}

/**
 * `count` enqueuer children (node --import tsx …childArgs), each saying 'ready', all sent 'go'
 * at once, each answering { jobs } when its time is up: the jobs of all, and over the elapsed time.
 * `window` (a server meter's) is read just before 'go' and as the last child answers. The children's
 * CPU over the window, when each reports its own as cpuUs (8 producers and the server share the host's cores).
 */
export async function timeEnqueuers(
  childArgs: readonly string[],
  env: NodeJS.ProcessEnv,
  count: number,
  /** The window each child times, which it was given in its arguments: it answers this long after 'go'. */
  seconds: number,
  window?: { begin(): Promise<void>; end(): Promise<void> },
): Promise<{ jobsPerSec: number; jobs: number; clientCpuUs: number | null }> {
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['--import', 'tsx', ...childArgs], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 2, 2, 'ipc'],
    }),
  );
  try {
    await Promise.all(children.map((c) => reply(c, READY_TIMEOUT_MS)));
    await window?.begin();
    const started = performance.now();
    for (const child of children) child.send('go');
    const counts = (await Promise.all(children.map((c) => reply(c, seconds * 1000 + ANSWER_GRACE_MS)))) as {
      jobs: number;
      cpuUs?: number;
    }[];
    const elapsed = (performance.now() - started) / 1000;
    await window?.end();
    // A child that waits to close its connections until the window is read (peerEnqueueChild.ts) closes now.
    for (const child of children) if (child.connected) child.send('close', () => undefined);
    await Promise.all(children.map((c) => (c.exitCode === null ? once(c, 'exit') : null)));
    const jobs = counts.reduce((sum, m) => sum + m.jobs, 0);
    const cpuUs = counts.every((m) => m.cpuUs !== undefined)
      ? counts.reduce((sum, m) => sum + (m.cpuUs ?? 0), 0)
      : null;
    return { jobsPerSec: jobs / elapsed, jobs, clientCpuUs: cpuUs };
  } catch (error) {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    throw error;
  }
}

/**
 * The child's next message, or an error after `timeoutMs` (the caller kills the children): a
 * producer stuck behind the server's locks must not hold the bench. Once, a raw INSERT row while
 * raw consumers drained spent ten minutes in its warm-up on MariaDB 10.11 (inserts waiting on the
 * claim loop's next-key locks, one claim's DELETE not returning for 570 s).
 */
function reply(child: ChildProcess, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`an enqueuer did not answer in ${timeoutMs / 1000} s`)), timeoutMs);
    child.once('message', (message) => {
      clearTimeout(timer);
      resolve(message);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`enqueuer exited with ${code}`));
    });
  });
}
