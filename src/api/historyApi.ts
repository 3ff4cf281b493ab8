import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { finishedPerInterval, type Throughput } from '../history/finishedPerInterval.ts';
import { finishedPerQueue } from '../history/finishedPerQueue.ts';
import { type Timings, type TimingsOptions, timingsPerInterval } from '../history/timingsPerInterval.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import type { Guard } from './Guard.ts';

/** `sluice.history.throughput(options)`. */
export interface ThroughputOptions {
  /** @defaultValue 60 */
  readonly bucketSeconds?: number;
  /** @defaultValue 60 */
  readonly buckets?: number;
  /** Index entries each read stops after (then `capped`). @defaultValue 200000 */
  readonly maxRows?: number;
  /** One queue's jobs only (by its own indexes). @defaultValue every queue */
  readonly queue?: string;
}

const THROUGHPUT_KEYS = optionKeys<ThroughputOptions>({
  bucketSeconds: true,
  buckets: true,
  maxRows: true,
  queue: true,
});
/** `sluice.history.timings(options)`. */
export interface QueueTimingsOptions extends Omit<TimingsOptions, 'bucketSeconds' | 'buckets'> {
  /** @defaultValue 60 */
  readonly bucketSeconds?: number;
  /** @defaultValue 60 */
  readonly buckets?: number;
}

const TIMINGS_KEYS = optionKeys<QueueTimingsOptions>({
  queue: true,
  name: true,
  bucketSeconds: true,
  buckets: true,
  maxRows: true,
  names: true,
});
const PER_QUEUE_KEYS = optionKeys<{ windowSeconds: number; maxRows?: number }>({ windowSeconds: true, maxRows: true });

/** `sluice.history`: what finished lately, from bounded reads of the history and dead-job tables. */
export function historyApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /**
     * Finished and died per bucket over the last `buckets` buckets of `bucketSeconds`, oldest
     * first (by default the last hour, per minute), of every queue or of one.
     */
    throughput: (options: ThroughputOptions = {}): Promise<Throughput> =>
      guard(() => {
        rejectUnknownKeys('sluice.history.throughput(options)', options, THROUGHPUT_KEYS);
        return finishedPerInterval(db, tables, { bucketSeconds: 60, buckets: 60, ...options });
      }),
    /**
     * One queue's jobs finished per bucket by job name, and the p50/p95 run time and wait (enqueue
     * to start) of its completed jobs — or of one job name's — per bucket, oldest first (by default
     * the last hour, per minute), from the last `maxRows` (20,000) history entries.
     */
    timings: (options: QueueTimingsOptions): Promise<Timings> =>
      guard(() => {
        rejectUnknownKeys('sluice.history.timings(options)', options, TIMINGS_KEYS);
        return timingsPerInterval(db, tables, { bucketSeconds: 60, buckets: 60, ...options });
      }),
    /** How many jobs of each queue finished in the last `windowSeconds` (capped: a lower bound). */
    perQueue: (options: {
      windowSeconds: number;
      maxRows?: number;
    }): Promise<{ counts: Map<string, number>; capped: boolean }> =>
      guard(() => {
        rejectUnknownKeys('sluice.history.perQueue(options)', options, PER_QUEUE_KEYS);
        return finishedPerQueue(db, tables, options);
      }),
  };
}

export type HistoryApi = ReturnType<typeof historyApi>;
