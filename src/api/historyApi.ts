import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { finishedPerInterval, type Throughput } from '../history/finishedPerInterval.ts';
import { finishedPerQueue } from '../history/finishedPerQueue.ts';
import type { Guard } from './Guard.ts';

/** `sluice.history`: what finished lately, from bounded reads of the history and dead-job tables. */
export function historyApi(db: Executor, tables: Tables, guard: Guard) {
  return {
    /**
     * Finished and died per bucket over the last `buckets` buckets of `bucketSeconds`, oldest
     * first (by default the last hour, per minute).
     */
    throughput: (options: { bucketSeconds?: number; buckets?: number; maxRows?: number } = {}): Promise<Throughput> =>
      guard(() => finishedPerInterval(db, tables, { bucketSeconds: 60, buckets: 60, ...options })),
    /** How many jobs of each queue finished in the last `windowSeconds` (capped: a lower bound). */
    perQueue: (options: {
      windowSeconds: number;
      maxRows?: number;
    }): Promise<{ counts: Map<string, number>; capped: boolean }> => guard(() => finishedPerQueue(db, tables, options)),
  };
}

export type HistoryApi = ReturnType<typeof historyApi>;
