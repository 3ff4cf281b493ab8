/**
 * The grid of `npm run bench`: every system drains the same jobs in every cell of processes
 * {1, 4} × concurrency {10, 50, 500} × payload {small, seed004, records}, one after another within the
 * cell (so a change in the machine's load falls on the cell, not on one system), one round each:
 *   - sluice at its defaults (peers/sluicePeer.ts: worker processes built through the package's
 *     API, only the concurrency set);
 *   - BullMQ without persistence and with AOF fsynced every second (peers/bullmqPeer.ts,
 *     peers/redisPersistence.ts switches the local server and restores it);
 *   - pg-boss at its best for the cell's concurrency (peers/pgBossPeer.ts);
 *   - the raw claim loop (peers/rawPeer.ts).
 * Each drain is sized from what the same system did before: its last drain rate × the target
 * seconds, so that every drain lasts about the target whatever the system's enqueue rate (a drain
 * of a second or two weighs each consumer process's start — first claims, a cold JIT — more than its
 * steady state), but no more than its last enqueue rate fills in ENQUEUE_TARGETS targets, within
 * [minJobs, maxJobs], and cut off at the limit: a fast system gets more jobs, a slow one is measured
 * over the window alone. The grid keeps to a time budget: when the cells so far project past it (a slow
 * or busy host), the target and the limit of the next cells shrink (to a quarter at most), and grow
 * back when there is time again; each cell reports the target it ran at. For sluice and the raw loop the server's counters are read
 * around the window (serverCounters.ts). A system whose server does not answer is skipped, saying
 * so; a drain that fails is reported as failed and the grid goes on.
 */
import type { Bench } from './benchDatabase.ts';
import { errorMessage } from './errorMessage.ts';
import type { Cell, GridSystem, SystemKey } from './gridSystems.ts';
import { type JobCpu, jobCpu } from './jobCpu.ts';
import { progress } from './progress.ts';
import { type ServerCost, serverMeter } from './serverCounters.ts';
import { serverProcessesMeter } from './serverCpu.ts';
import { type BenchJob, makeJobs, PAYLOAD_KINDS, type PayloadKind } from './workload.ts';

/** How big the run is: the full grid, or `--quick`'s two cells of a few hundred jobs. */
export interface GridSize {
  readonly cells: readonly Cell[];
  readonly targetSeconds: number;
  readonly limitSeconds: number;
  readonly minJobs: number;
  readonly maxJobs: Readonly<Record<PayloadKind, number>>;
  /** How long a drain waits for a quiet host before timing anyway. */
  readonly quietGiveUpMs: number;
  /** Seconds the whole grid should take; later cells' drains shrink to keep to it. */
  readonly budgetSeconds: number;
  /** Every drain this many jobs (up to maxJobs) instead of sized to the target: `--jobs`, for `--cells` runs. */
  readonly fixedJobs?: number;
}

const PROCESSES = [1, 4] as const;
const CONCURRENCIES = [10, 50, 500] as const;

export const FULL_GRID: GridSize = {
  cells: PAYLOAD_KINDS.flatMap((payload) =>
    PROCESSES.flatMap((processes) => CONCURRENCIES.map((concurrency) => ({ payload, processes, concurrency }))),
  ),
  targetSeconds: 4,
  limitSeconds: 10,
  minJobs: 2_000,
  maxJobs: { small: 150_000, seed004: 40_000, records: 40_000 },
  quietGiveUpMs: 3_000,
  // 13 minutes for the 12 cells of two payloads; the records row's six more get half as long again.
  budgetSeconds: 20 * 60,
};

export const QUICK_GRID: GridSize = {
  cells: [
    { payload: 'small', processes: 1, concurrency: 10 },
    { payload: 'seed004', processes: 4, concurrency: 500 },
  ],
  targetSeconds: 0.5,
  limitSeconds: 3,
  minJobs: 200,
  maxJobs: { small: 2_000, seed004: 1_000, records: 1_000 },
  quietGiveUpMs: 2_000,
  budgetSeconds: 120,
};

/**
 * How many targets' time a drain's bulk enqueue may take: sluice, pg-boss and the raw loop enqueue
 * seed004 payloads at a third to a quarter of their c500 drain rates, so a drain sized by the
 * enqueue alone lasted 1–1.5 s, where each process's start inflated the CPU per job by half
 * (bench/README.md, sizing).
 */
const ENQUEUE_TARGETS = 3;
/** First guess of a system's rate before it drained anything, jobs/s. */
const FIRST_GUESS: Record<PayloadKind, number> = { small: 10_000, seed004: 2_000, records: 2_000 };
/**
 * The share of a drain's jobs run before its window opens, every system alike (peer.ts, warmJobs):
 * a fleet runs for days, and a drain of a few seconds otherwise weighs each consumer process's
 * warm-up (JIT, the collector's young generation growing, the first claims) as much as a steady
 * minute's work. The rate from 'go' is kept beside it (`jobsPerSecFromGo`).
 */
export const WARM_SHARE = 0.25;

/** The smallest share of the target and limit the budget may cut a cell's drains to. */
const MIN_SCALE = 0.25;

export interface CellRun {
  readonly system: SystemKey;
  readonly describe: string;
  readonly enqueued: number;
  readonly jobsPerSec: number | null;
  /** Jobs left when the window closed (cut off at the limit), 0 otherwise. */
  readonly left: number;
  readonly seconds: number;
  readonly cost: ServerCost | null;
  /** CPU per job drained in the window, µs, every system alike (/proc); null where unreadable. */
  readonly cpu: JobCpu | null;
  /** The rate of the drain from 'go', warm-up included (the window opens after WARM_SHARE of the jobs). */
  readonly jobsPerSecFromGo?: number;
  readonly error?: string;
}

export interface CellResult {
  readonly cell: Cell;
  /** The drain target and cut-off this cell ran at (smaller than the size's when the budget said so). */
  readonly targetSeconds: number;
  readonly limitSeconds: number;
  readonly runs: readonly CellRun[];
}

/** What a system did last with a payload: sizes its next drain. */
interface Pace {
  readonly concurrency: number;
  readonly drainPerSec: number;
  readonly enqueuePerSec: number;
}

/** Drains every cell with every ready system; never throws for one drain that fails. */
export async function measureGrid(bench: Bench, systems: readonly GridSystem[], size: GridSize) {
  const jobsOf = new Map<PayloadKind, BenchJob[]>();
  const paces = new Map<string, Pace>();
  const results: CellResult[] = [];
  const started = performance.now();
  let scale = 1;
  for (const [index, cell] of size.cells.entries()) {
    const jobs = jobsOf.get(cell.payload) ?? makeJobs(size.maxJobs[cell.payload], cell.payload);
    jobsOf.set(cell.payload, jobs);
    const window = { targetSeconds: size.targetSeconds * scale, limitSeconds: size.limitSeconds * scale };
    const runs: CellRun[] = [];
    for (const system of systems) {
      const key = `${system.key}:${cell.payload}`;
      const count = jobCount(size, window.targetSeconds, cell, paces.get(key));
      const { run, enqueueSeconds } = await drainCell(bench, system, cell, jobs.slice(0, count), size, window);
      if (run.jobsPerSec !== null)
        paces.set(key, {
          concurrency: cell.concurrency,
          drainPerSec: run.jobsPerSec,
          enqueuePerSec: count / Math.max(enqueueSeconds, 0.001),
        });
      runs.push(run);
    }
    results.push({ cell, ...window, runs });
    const elapsed = (performance.now() - started) / 1000;
    const left = size.cells.length - index - 1;
    const projected = elapsed + (elapsed / (index + 1)) * left;
    if (projected > size.budgetSeconds) scale = Math.max(MIN_SCALE, scale * 0.7);
    else if (projected < size.budgetSeconds * 0.8) scale = Math.min(1, scale / 0.7);
    progress(
      `grid: cell ${index + 1}/${size.cells.length} done (${cellLabel(cell)}), ${elapsed.toFixed(0)} s so far, ~${(projected - elapsed).toFixed(0)} s to go${scale < 1 ? `; drains shortened to ${(scale * 100).toFixed(0)} % to keep to ${size.budgetSeconds} s` : ''}`,
    );
  }
  return results;
}

/**
 * Jobs for one drain: the system's last drain rate (scaled to this concurrency) × the target
 * seconds, at most what its last enqueue rate writes in ENQUEUE_TARGETS targets, within bounds.
 */
function jobCount(size: GridSize, targetSeconds: number, cell: Cell, last: Pace | undefined): number {
  if (size.fixedJobs !== undefined) return Math.min(size.fixedJobs, size.maxJobs[cell.payload]);
  const guess = last
    ? Math.min(
        last.enqueuePerSec * ENQUEUE_TARGETS,
        last.drainPerSec * Math.min(4, Math.max(0.25, Math.sqrt(cell.concurrency / last.concurrency))),
      )
    : FIRST_GUESS[cell.payload];
  const wanted = Math.round(guess * targetSeconds);
  return Math.max(size.minJobs, Math.min(size.maxJobs[cell.payload], wanted));
}

/** One drain of one cell by one system, with its enqueue and what it cost; never throws. */
export async function drainCell(
  bench: Bench,
  system: GridSystem,
  cell: Cell,
  jobs: readonly BenchJob[],
  size: GridSize,
  window: { readonly targetSeconds: number; readonly limitSeconds: number },
): Promise<{ run: CellRun; enqueueSeconds: number }> {
  const setting = system.settingFor(cell);
  const label = `${system.peer.name} ${cellLabel(cell)}`;
  const meter = system.metered ? serverMeter(bench.conn, new URL(bench.url).pathname.slice(1)) : null;
  const server = serverProcessesMeter(system.serverProcesses, meter?.window);
  try {
    await system.peer.clear();
    const enqueueSeconds = await system.peer.enqueue(jobs);
    const warmJobs = Math.round(jobs.length * WARM_SHARE);
    const hooks = { quietGiveUpMs: size.quietGiveUpMs, window: server.window, warmJobs };
    const drain = await system.peer.drain(setting, window.limitSeconds * 1000, hooks);
    await system.peer.clear();
    const cutOff = drain.left > 0 ? ` (cut off at ${window.limitSeconds.toFixed(1)} s, ${drain.left} left)` : '';
    progress(
      `  ${label}: ${jobs.length} jobs enqueued in ${enqueueSeconds.toFixed(1)} s, drained ${Math.round(drain.jobsPerSec)} jobs/s${drain.jobsPerSecFromGo === undefined ? '' : ` once warm (${Math.round(drain.jobsPerSecFromGo)} from 'go')`}${cutOff}`,
    );
    const run = {
      system: system.key,
      describe: setting.describe,
      enqueued: jobs.length,
      jobsPerSec: drain.jobsPerSec,
      left: drain.left,
      seconds: drain.seconds,
      cost: meter?.cost(drain.jobs) ?? null,
      cpu: jobCpu(drain.jobs, drain.clientCpuUs, server.usedUs()),
      ...(drain.jobsPerSecFromGo === undefined ? {} : { jobsPerSecFromGo: drain.jobsPerSecFromGo }),
    };
    return { run, enqueueSeconds };
  } catch (error) {
    progress(`  ${label}: failed: ${errorMessage(error)}`);
    await system.peer.clear().catch(() => undefined);
    const run = {
      system: system.key,
      describe: setting.describe,
      enqueued: jobs.length,
      jobsPerSec: null,
      left: 0,
      seconds: 0,
      cost: null,
      cpu: null,
      error: errorMessage(error),
    };
    return { run, enqueueSeconds: 0 };
  }
}

export function cellLabel(cell: Cell): string {
  return `${cell.payload} ×${cell.processes} c${cell.concurrency}`;
}
