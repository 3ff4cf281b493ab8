/**
 * What every peer of the benchmark (another job queue on another store) exposes, and the harness
 * they share so that every peer is measured the same way:
 *   - the drain: the setting's consumer child processes (one unless it says `processes`) are
 *     started and set up (connections, workers built but not consuming), each says 'ready'; the
 *     parent waits for a quiet host (quietHost.ts: what the previous row left running in the
 *     background stays out of this one's window), sends 'go' to all and starts its clock; the
 *     clock stops at
 *     the first probe (polled every POLL_INTERVAL_MS, a cheap existence check the peer supplies)
 *     that finds no waiting or active job. Jobs are enqueued before the child starts.
 *   - pickup latency: the same child, consuming an empty queue (measurePickup.ts).
 * The children and their protocol are consumerChild.ts's; each peer's file is also its child's script.
 */
import { createConnection } from 'node:net';
import { progress } from '../progress.ts';
import { quietHost } from '../quietHost.ts';
import { processesCpuUs } from '../serverCpu.ts';
import type { BenchJob } from '../workload.ts';
import { type RunningConsumers, startChildren } from './consumerChild.ts';

/** One measured configuration of a peer: a table row. */
export interface PeerSetting {
  /** 'defaults' (the peer's documented defaults, only the concurrency chosen) or 'best'. */
  readonly setting: 'defaults' | 'best';
  /** Jobs in flight at once in each consumer process. */
  readonly concurrency: number;
  /** Consumer processes of a drain (default 1); the pickup-latency probe always starts one. */
  readonly processes?: number;
  /** What the setting sets, in the peer's own option names, for the report. */
  readonly describe: string;
  /**
   * The drain's cut-off in seconds, when shorter than the harness's: for a setting known to drain
   * 100,000 jobs at a few jobs/s, whose rate is then measured over this window alone.
   */
  readonly limitSeconds?: number;
  /** What the consumer child needs to build its consumers (JSON-serialisable). */
  readonly options: Readonly<Record<string, unknown>>;
}

export interface DrainResult {
  /** Jobs drained inside the timed window. */
  readonly jobs: number;
  /** Waiting or active jobs left when the window closed: 0 unless cut off at the limit. */
  readonly left: number;
  readonly seconds: number;
  readonly jobsPerSec: number;
  /** CPU the consumer processes spent over the window, µs (/proc); null where unreadable. */
  readonly clientCpuUs: number | null;
  /** The rate of the whole drain from 'go', when the window opened later (DrainProbes.warmJobs). */
  readonly jobsPerSecFromGo?: number;
}

export interface Peer {
  /** e.g. "BullMQ 6.7.0". */
  readonly name: string;
  /** The server it needs, for the report and the skip line, e.g. "Redis at 127.0.0.1:6379". */
  readonly server: string;
  /** What it keeps of a finished job by default (durability next to sluice's job history). */
  readonly keeps: string;
  readonly settings: readonly PeerSetting[];
  /** Whether the server answers (never throws). */
  available(): Promise<boolean>;
  /** Connects and installs what the peer needs; the store starts empty. Returns the server's version. */
  setup(): Promise<string>;
  /** Removes every job of the bench queue (waiting, active, finished, archived). */
  clear(): Promise<void>;
  /** Bulk enqueue, outside any timed window; returns the seconds it took. */
  enqueue(jobs: readonly BenchJob[]): Promise<number>;
  drain(setting: PeerSetting, limitMs: number, hooks?: DrainHooks): Promise<DrainResult>;
  /** Starts the setting's consumer children consuming at once (no timing): workers that drain meanwhile. */
  consume(setting: PeerSetting): Promise<RunningConsumers>;
  /** What an acknowledged job survives, in a few words (e.g. "fsync per commit"), for the report. */
  durability(): Promise<string>;
  /**
   * Milliseconds from enqueue call (or, delayed, from the job's due time) to handler start, one
   * per sample.
   */
  pickupLatency(setting: PeerSetting, samples: number, delayed: boolean): Promise<number[]>;
  teardown(): Promise<void>;
}

/** The single-job producer a peer's file exports for the enqueuer children (peerEnqueueChild.ts). */
export interface Producer {
  /** Enqueues one job, due at once, and resolves once the store acknowledged it. */
  enqueueOne(payload: BenchJob['payload']): Promise<void>;
  close(): Promise<void>;
}

export const POLL_INTERVAL_MS = 20;
const PROGRESS_INTERVAL_MS = 5_000;

export interface DrainProbes {
  /** Cheap: is any job of the queue still waiting or active? Polled every POLL_INTERVAL_MS. */
  anyLeft(): Promise<boolean>;
  /** May be dear: how many are; at the start, for a progress line every 5 s, and when cut off. */
  countLeft(): Promise<number>;
  /** Called right before 'go' and right after the window closes: a server-side reading around it. */
  readonly window?: { begin(): Promise<void>; end(): Promise<void> };
  /** How long to wait for a quiet host before timing anyway (quietHost.ts's default when unset). */
  readonly quietGiveUpMs?: number;
  /**
   * Jobs drained before the window opens (default 0: it opens at 'go'). The consumer processes
   * warm up on them (JIT, the young generation's growth, the first claims), every system alike;
   * countLeft is read every WARM_POLL_MS until they are drained, and the window's readings
   * (`window.begin`, the processes' CPU) are taken again then. A drain over before that, or
   * with less than half of its jobs left by then, keeps the window from 'go'.
   */
  readonly warmJobs?: number;
}

/** What a caller may add to a peer's drain: a reading around the window, a shorter quiet wait, a warm-up. */
export type DrainHooks = Pick<DrainProbes, 'window' | 'quietGiveUpMs' | 'warmJobs'>;

/** How often countLeft is read while the warm-up jobs drain. */
const WARM_POLL_MS = 100;

/** Where a drain's window opened: when, with how many jobs left, the consumers' CPU then. */
interface WindowStart {
  readonly at: number;
  readonly left: number;
  readonly cpuUs: number | null;
}

/**
 * One timed drain of an already filled queue by the setting's consumer children. A drain still
 * running after limitMs is cut off: its rate is the jobs drained within the limit over the limit.
 */
export async function timedDrain(
  label: string,
  script: string,
  setting: PeerSetting,
  env: NodeJS.ProcessEnv,
  probes: DrainProbes,
  limitMs: number,
): Promise<DrainResult> {
  const initial = await probes.countLeft();
  const children = await startChildren(script, setting, env);
  let result: DrainResult;
  try {
    await quietHost(label, probes.quietGiveUpMs);
    await probes.window?.begin();
    const pids = children.map((c) => c.proc.pid);
    const cpuAtStart = processesCpuUs(pids);
    const startedAt = performance.now();
    for (const child of children) child.go();
    const warmJobs = probes.warmJobs ?? 0;
    const fromGo: WindowStart = { at: startedAt, left: initial, cpuUs: cpuAtStart };
    let opened: WindowStart | null = warmJobs > 0 ? null : fromGo;
    let lastCount = startedAt;
    let sentAt = startedAt;
    let lastProgress = startedAt;
    let left = true;
    while (left && sentAt - startedAt < limitMs) {
      await sleep(POLL_INTERVAL_MS);
      const exited = children.find((c) => c.proc.exitCode !== null);
      if (exited) throw new Error(`${label}: consumer exited with ${exited.proc.exitCode}`);
      if (opened === null && performance.now() - lastCount >= WARM_POLL_MS) {
        lastCount = performance.now();
        const count = await probes.countLeft();
        // Past the warm-up: the window opens, unless too little is left to time (a drain of a few
        // polls), when it stays open from 'go'.
        if (initial - count >= warmJobs) opened = count >= initial / 2 ? await openWindow(probes, pids) : fromGo;
      }
      sentAt = performance.now();
      left = await probes.anyLeft();
      if (left && performance.now() - lastProgress >= PROGRESS_INTERVAL_MS) {
        const count = await probes.countLeft();
        lastProgress = performance.now();
        const rate = Math.round((initial - count) / ((lastProgress - startedAt) / 1000));
        progress(`  ${label}: ${count.toLocaleString('en-US')} left, ${rate.toLocaleString('en-US')} jobs/s`);
      }
    }
    const cpuAtEnd = processesCpuUs(pids);
    await probes.window?.end();
    const from = opened ?? fromGo;
    const clientCpuUs = from.cpuUs === null || cpuAtEnd === null ? null : cpuAtEnd - from.cpuUs;
    const leftCount = left ? await probes.countLeft() : 0;
    const seconds = (sentAt - from.at) / 1000;
    if (leftCount > 0) progress(`  ${label}: cut off after ${limitMs / 1000} s with ${leftCount} jobs left`);
    const jobs = from.left - leftCount;
    const jobsPerSecFromGo = (initial - leftCount) / ((sentAt - startedAt) / 1000);
    result = {
      jobs,
      left: leftCount,
      seconds,
      jobsPerSec: jobs / seconds,
      clientCpuUs,
      ...(from === fromGo ? {} : { jobsPerSecFromGo }),
    };
  } catch (error) {
    for (const child of children) child.proc.kill('SIGKILL');
    throw error;
  }
  await Promise.all(children.map((child) => child.stop()));
  return result;
}

/**
 * The window's start once the warm-up jobs are drained: the readings around it taken again, then
 * the jobs left counted; its time is the middle of that count.
 */
async function openWindow(probes: DrainProbes, pids: readonly (number | undefined)[]): Promise<WindowStart> {
  await probes.window?.begin();
  const cpuUs = processesCpuUs(pids);
  const before = performance.now();
  const left = await probes.countLeft();
  return { at: (before + performance.now()) / 2, left, cpuUs };
}

/**
 * Whether something answers on host:port within timeoutMs: connects, writes `hello`, and
 * resolves true on the first bytes back that pass `accept`.
 */
export function answers(
  host: string,
  port: number,
  hello: Uint8Array,
  accept: (reply: Buffer) => boolean,
  timeoutMs = 2_000,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write(hello));
    socket.on('data', (reply) => done(accept(reply)));
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
