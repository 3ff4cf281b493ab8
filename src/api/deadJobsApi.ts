import type { DeadJobFilter } from '../deadJobs/deadJobFilter.ts';
import { type DeadJob, listDeadJobs } from '../deadJobs/listDeadJobs.ts';
import { purgeDeadJobs } from '../deadJobs/purgeDeadJobs.ts';
import { redriveDeadJobs } from '../deadJobs/redriveDeadJobs.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import type { Guard } from './Guard.ts';

/** `sluice.deadJobs`: jobs that ran out of retries — list (paged), re-drive into the live queue, or purge, each filtered. */
export function deadJobsApi(runtime: SluiceRuntime, guard: Guard) {
  const { db, tables } = runtime;
  return {
    list: (filter?: DeadJobFilter, page?: { afterId?: number; limit?: number }): Promise<DeadJob[]> =>
      guard(() => listDeadJobs(db, tables, filter, page)),
    /** Moves matching dead jobs back into the live queue (retries reset), in bounded batches; wakes their workers. */
    redrive: (
      filter?: DeadJobFilter,
      options?: { batchSize?: number; onProgress?: (n: number) => void },
    ): Promise<{ redriven: number }> =>
      guard(() =>
        redriveDeadJobs(db, tables, filter, {
          ...options,
          onMoved: (queues) => ringAfterCommit(runtime, undefined, queues),
        }),
      ),
    purge: (filter?: DeadJobFilter, options?: { batchSize?: number }): Promise<{ purged: number }> =>
      guard(() => purgeDeadJobs(db, tables, filter, options)),
  };
}

export type DeadJobsApi = ReturnType<typeof deadJobsApi>;
