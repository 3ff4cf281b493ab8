import type { Knex } from 'knex';
import type { QueueDepthRow } from '../api/queuesApi.ts';
import type { Sluice } from '../Sluice.ts';
import type { DemoProcess } from './demoFleet.ts';
import { runsProof } from './demoRuns.ts';

export interface DrainWatch {
  readonly sluice: Sluice;
  readonly knex: Knex;
  readonly queue: string;
  readonly total: number;
  readonly processes: readonly DemoProcess[];
  /** Problems the children reported (failed jobs, errors), newest last. */
  readonly problems: readonly string[];
  /** Aborted on SIGINT/SIGTERM. */
  readonly signal: AbortSignal;
  readonly startedAt: number;
}

/** How long the demo waits without a single job running before it calls the drain stuck. */
const STALL_MS = 30_000;
const POLL_MS = 200;
const BAR_WIDTH = 30;

/**
 * Shows the drain — a bar on a terminal, a line a second otherwise — counting jobs whose handler
 * ran (the demo table's rows), not jobs that left the queue: a dead-lettered job never counts as
 * done. Returns null once every job ran and none is left, or the reason the demo failed, as soon
 * as it shows: a failed or dead-lettered job, a child that exited, no progress for 30 s, a signal.
 */
export async function watchDrain(w: DrainWatch): Promise<string | null> {
  const tty = process.stdout.isTTY === true;
  let lastLine = 0;
  let lastRuns = -1;
  let lastProgressAt = performance.now();
  const finishLine = () => tty && process.stdout.write('\n');
  for (;;) {
    let stats: QueueDepthRow | undefined;
    let runs: number;
    try {
      // Queue first, runs second: a job that left the queue has its run row committed before.
      [stats] = await w.sluice.queues.depth({ queue: w.queue });
      runs = (await runsProof(w.knex)).runs;
    } catch (error) {
      finishLine();
      return `cannot read the drain's progress: ${(error as Error).message}`;
    }
    const left = stats ? stats.ready.count + stats.notDue.count + stats.running.count : 0;
    const dead = stats?.dead.count ?? 0;
    const now = performance.now();
    if (runs !== lastRuns) {
      lastRuns = runs;
      lastProgressAt = now;
    }
    const rate = Math.round(runs / ((now - w.startedAt) / 1000));
    const filled = Math.min(BAR_WIDTH, Math.round((runs / w.total) * BAR_WIDTH));
    const line = `   [${'#'.repeat(filled)}${' '.repeat(BAR_WIDTH - filled)}] ${runs}/${w.total} ran, ${stats?.running.count ?? 0} running, ${dead} dead, ${rate} jobs/s`;
    const failure = failureOf(w, { runs, dead, left, idleMs: now - lastProgressAt });
    const done = failure === null && left === 0 && runs >= w.total;
    if (tty) process.stdout.write(`\r${line}`);
    else if (now - lastLine >= 1000 || done || failure) {
      process.stdout.write(`${line}\n`);
      lastLine = now;
    }
    if (failure || done) {
      finishLine();
      return failure;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

interface DrainState {
  readonly runs: number;
  readonly dead: number;
  readonly left: number;
  readonly idleMs: number;
}

function failureOf(w: DrainWatch, { runs, dead, left, idleMs }: DrainState): string | null {
  if (w.signal.aborted) return 'interrupted';
  if (w.problems.length > 0)
    return `a job failed or a process reported an error: ${w.problems[0]}${w.problems.length > 1 ? ` (and ${w.problems.length - 1} more)` : ''}`;
  if (dead > 0) return `${dead} job(s) were dead-lettered`;
  const exited = w.processes.find((p) => p.child.exitCode !== null || p.child.signalCode !== null);
  if (exited)
    return `${exited.label} (pid ${exited.child.pid}) exited with ${exited.child.exitCode ?? exited.child.signalCode}`;
  if (left === 0 && runs < w.total) return `the queue is empty but only ${runs} of ${w.total} jobs ran`;
  if (idleMs > STALL_MS) return `no job ran for ${STALL_MS / 1000} s`;
  return null;
}
