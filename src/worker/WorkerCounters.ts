import { memoryUsage } from 'node:process';
import {
  ATTEMPT_DURATION_BUCKETS_S,
  METRICS_VERSION,
  OTHER_NAME,
  START_LATENCY_BUCKETS_S,
  type WireMetrics,
} from './metricsSnapshot.ts';

/** What became of an attempt or a job, as counted per queue and name. */
export type CountedOutcome = 'completed' | 'failed' | 'retried' | 'dead' | 'cancelled';

const OUTCOME_INDEX: Readonly<Record<CountedOutcome, 1 | 2 | 3 | 4 | 5>> = {
  completed: 1,
  failed: 2,
  retried: 3,
  dead: 4,
  cancelled: 5,
};

/** Bucket counts of a fixed set of bounds (seconds), and their sum in ms. */
class Buckets {
  readonly counts: number[];
  sumMs = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length + 1).fill(0);
  }

  observe(ms: number): void {
    const seconds = Math.max(0, ms) / 1000;
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sumMs += Math.max(0, ms);
  }

  /** Trailing zeros left out, the sum rounded to whole ms: the bytes go into every send. */
  wire(): [number[], number] {
    let end = this.counts.length;
    while (end > 0 && this.counts[end - 1] === 0) end--;
    return [this.counts.slice(0, end), Math.round(this.sumMs)];
  }
}

interface NameCounts {
  /** claimed, completed, failed, retried, dead, cancelled */
  readonly counts: [number, number, number, number, number, number];
  readonly duration: Buckets;
}

interface QueueCounts {
  claims: number;
  emptyClaims: number;
  readonly latency: Buckets;
  readonly names: Map<string, NameCounts>;
}

/** Queues a worker counts apart (its metrics and its registry row's counters); the rest count as OTHER_NAME. */
export const MAX_COUNTED_QUEUES = 100;

/**
 * What one worker counts and times for the metrics (src/worker/metricsSnapshot.ts): per queue,
 * claim round trips and the start latency of what they claimed; per queue and job name, jobs
 * claimed, their outcomes and their attempts' durations. Plain increments in memory, no I/O: the
 * heartbeat carries snapshot() to the registry row. Names are bounded: past `maxNames` (queue,
 * name) pairs, a new name counts under OTHER_NAME, so a worker never sends more than a fixed
 * number of series whatever names its jobs carry. Queues too: past MAX_COUNTED_QUEUES a new queue
 * counts under OTHER_NAME (a worker on a pattern may meet thousands).
 */
export class WorkerCounters {
  readonly #queues = new Map<string, QueueCounts>();
  #named = 0;

  constructor(private readonly maxNames: number) {}

  /** One claim round trip to `queue`, and the jobs it claimed with how long each had been due (ms, DB clock). */
  claimed(queue: string, jobs: readonly { readonly name: string; readonly waitedMs: number | null }[]): void {
    const q = this.#queue(queue);
    q.claims++;
    if (jobs.length === 0) q.emptyClaims++;
    for (const job of jobs) {
      const n = this.#name(q, job.name);
      n.counts[0]++;
      if (job.waitedMs !== null) q.latency.observe(job.waitedMs);
    }
  }

  /** An outcome of a job of `queue` named `name`; with `durationMs` when it ends an attempt that ran. */
  outcome(queue: string, name: string, outcome: CountedOutcome, durationMs?: number): void {
    const n = this.#name(this.#queue(queue), name);
    const i = OUTCOME_INDEX[outcome];
    n.counts[i] = n.counts[i] + 1;
    if (durationMs !== undefined) n.duration.observe(durationMs);
  }

  /** Everything counted so far, as the registry row's JSON text, with the process's gauges. */
  snapshot(eventLoopDelayMaxMs: number): string {
    const q: WireMetrics['q'] = {};
    for (const [queue, c] of this.#queues) {
      const names: WireMetrics['q'][string][4] = {};
      for (const [name, n] of c.names) {
        names[name] = [...n.counts, ...n.duration.wire()];
      }
      q[queue] = [c.claims, c.emptyClaims, ...c.latency.wire(), names];
    }
    const wire: WireMetrics = { v: METRICS_VERSION, p: [memoryUsage.rss(), Math.round(eventLoopDelayMaxMs)], q };
    return JSON.stringify(wire);
  }

  #queue(queue: string): QueueCounts {
    // A worker on thousands of queues (a pattern): past MAX_COUNTED_QUEUES the rest count as one.
    const key = this.#queues.has(queue) || this.#queues.size < MAX_COUNTED_QUEUES ? queue : OTHER_NAME;
    let q = this.#queues.get(key);
    if (!q) {
      q = { claims: 0, emptyClaims: 0, latency: new Buckets(START_LATENCY_BUCKETS_S), names: new Map() };
      this.#queues.set(key, q);
    }
    return q;
  }

  #name(q: QueueCounts, name: string): NameCounts {
    let n = q.names.get(name);
    if (n) return n;
    const label = this.#named < this.maxNames ? name : OTHER_NAME;
    n = q.names.get(label);
    if (!n) {
      n = { counts: [0, 0, 0, 0, 0, 0], duration: new Buckets(ATTEMPT_DURATION_BUCKETS_S) };
      q.names.set(label, n);
      if (label !== OTHER_NAME) this.#named++;
    }
    return n;
  }
}
