/**
 * A worker's own metrics as its registry row carries them (`workers.metrics`), and as
 * `sluice.workers.list({ metrics: true })` returns them. Everything is counted since the worker
 * started (counters that reset with it, as Prometheus expects of a process's counters).
 *
 * The row holds compact JSON, written with the heartbeat at most every metricsIntervalMs: bytes
 * ride every few beats of every worker, so the shape is positional rather than self-describing.
 *
 *   { "v": 1,
 *     "p": [residentMemoryBytes, eventLoopDelayMaxMs],
 *     "q": { "<queue>": [claims, emptyClaims, [startLatency buckets…], startLatencySumMs,
 *                        { "<name>": [claimed, completed, failed, retried, dead, cancelled,
 *                                     [attemptDuration buckets…], attemptDurationSumMs] }] } }
 *
 * Bucket counts are per bucket (not cumulative), one per bound in *_BUCKETS_S and a last one for
 * +Inf, with trailing zeros left out; sums are whole milliseconds. A row of another version, or one
 * that does not parse, reads as null (a worker of an older or newer sluice).
 */

/** Upper bounds (s) of the attempt-duration buckets: claim to outcome written. */
export const ATTEMPT_DURATION_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900];

/** Upper bounds (s) of the start-latency buckets: from when a job was due to its claim (DB clock). */
export const START_LATENCY_BUCKETS_S = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600];

/** The label of a job name past a worker's metricsMaxNames (job names cannot contain parentheses). */
export const OTHER_NAME = '(other)';

export const METRICS_VERSION = 1;

/** A histogram's counts: `buckets[i]` observations in (bound[i-1], bound[i]], the last one past every bound. */
export interface HistogramCounts {
  readonly buckets: readonly number[];
  readonly sumSeconds: number;
  readonly count: number;
}

/** One job name's counts in one queue. */
export interface JobNameMetrics {
  /** Jobs claimed: attempts started (a job claimed with its retries already used up is dead-lettered without running). */
  readonly claimed: number;
  readonly completed: number;
  /** Attempts that failed (each is then retried or dead-lettered, or, at-most-once, dropped). */
  readonly failed: number;
  readonly retried: number;
  readonly dead: number;
  /** Cancelled while this worker ran them. */
  readonly cancelled: number;
  /** How long attempts took, claim to outcome (completed, failed and cancelled ones). */
  readonly attemptDuration: HistogramCounts;
}

export interface QueueMetrics {
  /** Claim round trips to the queue (each one statement, or one short transaction with skip-locked). */
  readonly claims: number;
  /** Of those, the ones that claimed nothing. */
  readonly emptyClaims: number;
  /** From when each claimed job was due (enqueued, its runAt, its retry's time) to its claim. */
  readonly startLatency: HistogramCounts;
  /** Per job name, at most metricsMaxNames names per worker; the rest under OTHER_NAME. */
  readonly names: Readonly<Record<string, JobNameMetrics>>;
}

export interface WorkerMetrics {
  readonly queues: Readonly<Record<string, QueueMetrics>>;
  /** The worker process's resident memory when sent. */
  readonly residentMemoryBytes: number;
  /** The longest the worker's event loop was blocked in the interval before the last send. */
  readonly eventLoopDelayMaxMs: number;
}

type WireHistogram = [number[], number];
type WireName = [number, number, number, number, number, number, number[], number];
type WireQueue = [number, number, number[], number, Record<string, WireName>];
export interface WireMetrics {
  v: typeof METRICS_VERSION;
  p: [number, number];
  q: Record<string, WireQueue>;
}

/** Pure: the registry row's text as WorkerMetrics, or null (absent, another version, or malformed). */
export function decodeWorkerMetrics(text: unknown): WorkerMetrics | null {
  if (typeof text !== 'string' || text === '') return null;
  try {
    const wire = JSON.parse(text) as WireMetrics;
    if (wire?.v !== METRICS_VERSION || !Array.isArray(wire.p) || typeof wire.q !== 'object') return null;
    const queues: Record<string, QueueMetrics> = {};
    for (const [queue, [claims, emptyClaims, latency, latencySumMs, names]] of Object.entries(wire.q)) {
      const byName: Record<string, JobNameMetrics> = {};
      for (const [name, n] of Object.entries(names)) {
        const [claimed, completed, failed, retried, dead, cancelled, buckets, sumMs] = n;
        const attemptDuration = histogram([buckets, sumMs], ATTEMPT_DURATION_BUCKETS_S.length);
        byName[name] = { claimed, completed, failed, retried, dead, cancelled, attemptDuration };
      }
      queues[queue] = {
        claims,
        emptyClaims,
        startLatency: histogram([latency, latencySumMs], START_LATENCY_BUCKETS_S.length),
        names: byName,
      };
    }
    return { queues, residentMemoryBytes: wire.p[0], eventLoopDelayMaxMs: wire.p[1] };
  } catch {
    return null;
  }
}

/** Pure: wire bucket counts (trailing zeros left out) as a histogram of `bounds` + 1 buckets. */
function histogram([buckets, sumMs]: WireHistogram, bounds: number): HistogramCounts {
  const full = Array.from({ length: bounds + 1 }, (_, i) => Number(buckets[i] ?? 0));
  return { buckets: full, sumSeconds: sumMs / 1000, count: full.reduce((a, b) => a + b, 0) };
}
