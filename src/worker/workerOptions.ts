import { OptionsError } from '../errors.ts';
import { backoffProblem } from '../model/backoff.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import type { Backoff } from '../model/job.ts';
import { assertQueueEntry } from '../model/queuePattern.ts';
import { defined, integerIn, rejectUnknownKeys } from '../options.ts';
import type { LoadPolicy } from './ConcurrencyLimit.ts';
import { type LoadReading, readHostLoad } from './hostLoad.ts';

export type ClaimStrategy = 'random-head' | 'skip-locked';

/** sluice.worker()'s options. Every field is optional. */
export interface WorkerOptions {
  /**
   * Queues to claim from: names (at most 1,000), and patterns — a name prefix then `*` (`'tenant-*'`,
   * or `'*'` for every queue) — alone or in a list. Up to 8 names are claimed each in turn; more
   * names, or a pattern, and the worker finds the queues with due work by a scan of the job index
   * (never the backlog) and claims across up to 50 of them per claim, each queue in turn.
   * An enqueue to any queue of a pattern rings the worker's doorbell, as one to a queue it names
   * does. @defaultValue `['default']`
   */
  queues?: string | string[];
  /** Jobs run at once by this worker. @defaultValue 10 */
  concurrency?: number;
  /** A folder of job files (one `export default defineJob(…)` each) or a list of definitions. @defaultValue `'jobs'` */
  jobs?: string | JobDefinition<any>[];
  /**
   * How a claim picks jobs: `random-head` reads the head of the queue and takes free ids at random
   * among the first `headSize` (no lock held between read and write); `skip-locked` uses `SELECT …
   * FOR UPDATE SKIP LOCKED` in a short transaction (docs/how-it-works.md "Claim"). @defaultValue `'random-head'`
   */
  claim?: ClaimStrategy;
  /** Candidates read per head scan (random-head): more candidates, fewer collisions between workers. @defaultValue 200 */
  headSize?: number;
  /**
   * Most jobs taken by one claim statement. A claim asks for as many jobs as the worker has free
   * slots, up to this: with the default, one claim fills a worker of any concurrency up to 1,000.
   * @defaultValue 1,000
   */
  claimBatchSize?: number;
  /**
   * How long a claim lives without a heartbeat. The worker registers it, and the maintenance
   * process judges this worker's claims by it (not by its own lockTimeoutMs). @defaultValue 30,000
   */
  lockTimeoutMs?: number;
  /** How often in-flight claims are extended and the registry row refreshed. At least 100, at most lockTimeoutMs / 2. @defaultValue the smaller of 2,000 and lockTimeoutMs / 3 */
  heartbeatIntervalMs?: number;
  /**
   * Whether enqueues in other processes wake this worker through its doorbell (a connection of its
   * own asleep in SELECT SLEEP, ended by the enqueuer's KILL QUERY). Off: one connection fewer, no
   * per-job wake-ups, and jobs from other processes start at the next poll. @defaultValue true
   */
  doorbell?: boolean;
  /** Delay between polls of an empty queue (jittered ±25 %). @defaultValue 1,000 */
  pollIntervalMs?: number;
  /** Longest delay between polls of empty queues: each empty poll doubles the delay up to this. @defaultValue 5,000 */
  maxPollIntervalMs?: number;
  /** How long stop() waits for in-flight jobs before releasing them. @defaultValue 10,000 */
  shutdownTimeoutMs?: number;
  /**
   * How long one attempt may run when its definition sets no timeoutMs: then its signal aborts and
   * the attempt is recorded as failed. A handler that ignores the signal keeps its slot until it
   * settles. @defaultValue 15 minutes
   */
  jobTimeoutMs?: number;
  /** Default retries for definitions that set none. @defaultValue 3 */
  maxRetries?: number;
  /** Default backoff for definitions that set none. @defaultValue exponential from 1 s, capped at 1 h, ±20 % jitter */
  backoff?: Backoff;
  /**
   * Load-aware concurrency: above maxCpu (host CPU busy fraction) or below minFreeMem (free
   * memory fraction) the worker halves how many jobs it runs at once; with room it grows back.
   * The CPU rule is off by default (maxCpu 1): a worker that keeps the CPU busy with useful jobs
   * is not overloaded, and throttling it only slows the queue. Set maxCpu (e.g. 0.9) where jobs
   * compete with latency-sensitive work on the host. @defaultValue maxCpu 1, minFreeMem 0.05
   */
  loadPolicy?: Partial<LoadPolicy>;
  /**
   * A name for this worker that outlives its process (metrics label workers with it, so a
   * restarted worker continues its series). 1–64 characters. @defaultValue `SLUICE_WORKER_NAME`,
   * else `pm2-<instance>` under PM2, else `pid-<pid>`
   */
  name?: string;
  /** Reads the host's load (tests inject one). @defaultValue os-utils CPU, Node's memory figures */
  loadSampler?: () => Promise<LoadReading>;
  /**
   * How often this worker's counters and histograms (the metrics: jobs per queue, name and
   * outcome, attempt durations, start latencies) ride its heartbeat into its registry row, where
   * `sluice metrics` reads them: the metrics are at most this stale (plus a heartbeat interval).
   * 0 sends them with every beat. @defaultValue 10,000
   */
  metricsIntervalMs?: number;
  /**
   * Most job names the metrics count separately, over all queues of this worker; the jobs of
   * further names count under the name `(other)`. Bounds the series a worker sends and the
   * metrics expose, whatever names jobs carry. @defaultValue 50
   */
  metricsMaxNames?: number;
  /**
   * How often this worker settles the fair groups of the jobs it completed (jittered ±50 %): a fair
   * share's completion does not touch its group's row; the worker counts it and, once per interval
   * and group, counts the jobs off in one short transaction, refilling the group's window once at
   * most three quarters of it are live. Longer: fewer transactions, and a window that refills later (a group
   * may run short of live jobs meanwhile); counts of a worker that dies unsettled are recounted by
   * the maintenance process (reconcileGroups). @defaultValue 25
   */
  fairSettleIntervalMs?: number;
}

/** Every option set, checked; lists are read-only. */
export type ResolvedWorkerOptions = Readonly<
  Required<Omit<WorkerOptions, 'queues' | 'jobs' | 'loadPolicy'>> & {
    queues: readonly string[];
    jobs: string | readonly JobDefinition<any>[];
    loadPolicy: LoadPolicy;
  }
>;

/** The most entries (names and patterns) of one worker's queues: its registry row lists them all (TEXT: 64 KiB). */
const MAX_QUEUES = 1_000;

/** The smallest heartbeat interval: below it a worker would spend its time, and the server's, on heartbeats. */
export const MIN_HEARTBEAT_INTERVAL_MS = 100;

export const WORKER_DEFAULTS = {
  queues: ['default'],
  concurrency: 10,
  jobs: 'jobs',
  claim: 'random-head',
  headSize: 200,
  claimBatchSize: 1_000,
  doorbell: true,
  lockTimeoutMs: 30_000,
  heartbeatIntervalMs: 2_000,
  pollIntervalMs: 1_000,
  maxPollIntervalMs: 5_000,
  shutdownTimeoutMs: 10_000,
  jobTimeoutMs: 15 * 60_000,
  maxRetries: 3,
  backoff: { type: 'exponential', delayMs: 1_000, maxDelayMs: 3_600_000, jitter: 0.2 },
  loadPolicy: { enabled: true, maxCpu: 1, minFreeMem: 0.05 },
  loadSampler: readHostLoad,
  name: defaultWorkerName(),
  metricsIntervalMs: 10_000,
  metricsMaxNames: 50,
  fairSettleIntervalMs: 25,
} as const satisfies ResolvedWorkerOptions;

function defaultWorkerName(): string {
  if (process.env.SLUICE_WORKER_NAME) return process.env.SLUICE_WORKER_NAME.slice(0, 64);
  if (process.env.NODE_APP_INSTANCE !== undefined) return `pm2-${process.env.NODE_APP_INSTANCE}`;
  return `pid-${process.pid}`;
}

export function resolveWorkerOptions(options: WorkerOptions): ResolvedWorkerOptions {
  rejectUnknownKeys('sluice.worker', options, Object.keys(WORKER_DEFAULTS));
  rejectUnknownKeys('sluice.worker loadPolicy', options.loadPolicy, Object.keys(WORKER_DEFAULTS.loadPolicy));
  const lockTimeoutMs = integerIn(
    'lockTimeoutMs',
    options.lockTimeoutMs ?? WORKER_DEFAULTS.lockTimeoutMs,
    2 * MIN_HEARTBEAT_INTERVAL_MS,
  );
  const r = {
    ...WORKER_DEFAULTS,
    heartbeatIntervalMs: Math.max(
      MIN_HEARTBEAT_INTERVAL_MS,
      Math.min(WORKER_DEFAULTS.heartbeatIntervalMs, Math.floor(lockTimeoutMs / 3)),
    ),
    ...defined(options),
    loadPolicy: { ...WORKER_DEFAULTS.loadPolicy, ...defined(options.loadPolicy) },
  };
  const queues: unknown = typeof r.queues === 'string' ? [r.queues] : r.queues;
  if (!Array.isArray(queues) || queues.length === 0 || queues.length > MAX_QUEUES) {
    throw new OptionsError(
      'queues',
      `must be a queue name or pattern, or a list of 1 to ${MAX_QUEUES} of them (got ${queues === undefined ? 'undefined' : JSON.stringify(queues).slice(0, 200)})`,
    );
  }
  for (const queue of queues) assertQueueEntry('queues', queue);
  integerIn('concurrency', r.concurrency, 1, 10_000);
  integerIn('headSize', r.headSize, 1, 10_000);
  integerIn('claimBatchSize', r.claimBatchSize, 1, 1_000);
  integerIn('heartbeatIntervalMs', r.heartbeatIntervalMs, MIN_HEARTBEAT_INTERVAL_MS);
  integerIn('pollIntervalMs', r.pollIntervalMs, 1);
  integerIn('maxPollIntervalMs', r.maxPollIntervalMs, r.pollIntervalMs);
  integerIn('shutdownTimeoutMs', r.shutdownTimeoutMs, 1);
  integerIn('jobTimeoutMs', r.jobTimeoutMs, 1, 2_147_483_647);
  integerIn('maxRetries', r.maxRetries, 0, 1_000_000);
  integerIn('metricsIntervalMs', r.metricsIntervalMs, 0);
  integerIn('metricsMaxNames', r.metricsMaxNames, 1, 1_000);
  integerIn('fairSettleIntervalMs', r.fairSettleIntervalMs, 1, 600_000);
  const { maxCpu, minFreeMem } = r.loadPolicy;
  if (!(maxCpu > 0 && maxCpu <= 1)) throw new OptionsError('loadPolicy.maxCpu', `must be in (0, 1] (got ${maxCpu})`);
  if (!(minFreeMem >= 0 && minFreeMem < 1))
    throw new OptionsError('loadPolicy.minFreeMem', `must be in [0, 1) (got ${minFreeMem})`);
  if (typeof r.name !== 'string' || r.name.length < 1 || r.name.length > 64) {
    throw new OptionsError('name', `must be a string of 1–64 characters (got ${JSON.stringify(r.name)})`);
  }
  if (typeof r.loadSampler !== 'function')
    throw new OptionsError('loadSampler', 'must be a function returning a load reading');
  if (r.claim !== 'random-head' && r.claim !== 'skip-locked') {
    throw new OptionsError('claim', `must be 'random-head' or 'skip-locked' (got ${JSON.stringify(r.claim)})`);
  }
  if (typeof r.doorbell !== 'boolean')
    throw new OptionsError('doorbell', `must be true or false (got ${JSON.stringify(r.doorbell)})`);
  const backoff = backoffProblem(r.backoff, true);
  if (backoff) throw new OptionsError('backoff', backoff);
  if (r.heartbeatIntervalMs * 2 > lockTimeoutMs) {
    throw new OptionsError(
      'heartbeatIntervalMs',
      `must be at most half of lockTimeoutMs (${r.heartbeatIntervalMs} vs ${lockTimeoutMs}), or live jobs get swept`,
    );
  }
  return { ...r, lockTimeoutMs, queues: [...new Set(queues as string[])] };
}

/**
 * An exactly-once job holds a connection of the install's pool for its whole run (its handler
 * runs inside the transaction that removes it): with fewer connections than jobs at once, the
 * rest wait for one, past their timeouts. Refused at start, with the fix.
 */
export function assertPoolFits(definitions: readonly JobDefinition<any>[], concurrency: number, poolMax: number): void {
  const exactlyOnce = definitions.filter((d) => d.delivery === 'exactly-once').map((d) => d.name);
  if (exactlyOnce.length === 0 || poolMax >= concurrency) return;
  throw new OptionsError(
    'concurrency',
    `${concurrency} jobs at once, and exactly-once jobs (${exactlyOnce.slice(0, 3).join(', ')}) each hold a connection ` +
      `for their whole run, but the pool has ${poolMax}: raise poolMax (createSluice) to at least ${concurrency}, or lower concurrency`,
  );
}
