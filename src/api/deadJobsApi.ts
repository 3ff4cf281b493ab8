import { DEAD_JOB_FILTER_KEYS, type DeadJobFilter } from '../deadJobs/deadJobFilter.ts';
import {
  FAILURE_GROUP_KEYS,
  type FailureGroupOptions,
  type FailureGroups,
  failureGroups,
} from '../deadJobs/failureGroups.ts';
import { type DeadJob, listDeadJobs } from '../deadJobs/listDeadJobs.ts';
import { purgeDeadJobs } from '../deadJobs/purgeDeadJobs.ts';
import { redriveDeadJobs } from '../deadJobs/redriveDeadJobs.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import type { Guard } from './Guard.ts';

const PAGE_KEYS = optionKeys<{ afterId?: number; limit?: number }>({ afterId: true, limit: true });
const REDRIVE_KEYS = optionKeys<{ batchSize?: number; onProgress?: unknown }>({ batchSize: true, onProgress: true });
const PURGE_KEYS = optionKeys<{ batchSize?: number }>({ batchSize: true });

/** `sluice.deadJobs`: jobs that ran out of retries — list (paged), re-drive into the live queue, or purge, each filtered. */
export function deadJobsApi(runtime: SluiceRuntime, guard: Guard) {
  const { db, tables } = runtime;
  return {
    /** One page of dead jobs matching the filter, in id order: pass the last id as `afterId` for the next (`limit` 100 by default). */
    list: (filter?: DeadJobFilter, page?: { afterId?: number; limit?: number }): Promise<DeadJob[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.deadJobs.list(filter)', filter, DEAD_JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.deadJobs.list(filter, page)', page, PAGE_KEYS);
        return listDeadJobs(db, tables, filter, page);
      }),
    /** Moves matching dead jobs back into the live queue (retries reset), in bounded batches; wakes their workers. */
    redrive: (
      filter?: DeadJobFilter,
      options?: { batchSize?: number; onProgress?: (n: number) => void },
    ): Promise<{ redriven: number }> =>
      guard(() => {
        rejectUnknownKeys('sluice.deadJobs.redrive(filter)', filter, DEAD_JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.deadJobs.redrive(filter, options)', options, REDRIVE_KEYS);
        return redriveDeadJobs(db, tables, filter, {
          ...options,
          onMoved: (queues) => ringAfterCommit(runtime, undefined, queues),
        });
      }),
    /**
     * The newest dead jobs (`limit`, 2,000 by default) grouped by queue, job name and the shape of
     * their error's first line (ids, numbers and quoted values replaced), most first, with how many,
     * an example and how long ago the newest and oldest died. One statement of `limit` rows.
     */
    groups: (options?: FailureGroupOptions): Promise<FailureGroups> =>
      guard(() => {
        rejectUnknownKeys('sluice.deadJobs.groups(options)', options, FAILURE_GROUP_KEYS);
        return failureGroups(db, tables, options);
      }),
    /** Deletes matching dead jobs for good, in bounded batches; resolves to how many. */
    purge: (filter?: DeadJobFilter, options?: { batchSize?: number }): Promise<{ purged: number }> =>
      guard(() => {
        rejectUnknownKeys('sluice.deadJobs.purge(filter)', filter, DEAD_JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.deadJobs.purge(filter, options)', options, PURGE_KEYS);
        return purgeDeadJobs(db, tables, filter, options);
      }),
  };
}

export type DeadJobsApi = ReturnType<typeof deadJobsApi>;
