import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { countJobs } from '../jobControl/countJobs.ts';
import { integerIn } from '../options.ts';
import { listQueueNames } from '../queues/listQueueNames.ts';
import { pausedQueues, pauseQueue, resumeQueue } from '../queues/pauseQueue.ts';
import { type BoundedCount, type QueueDepth, queueDepth } from '../stats/queueDepth.ts';

export type { BoundedCount };

import type { Guard } from './Guard.ts';

/** Each count of a depth read stops after this many index entries unless the caller says otherwise. */
export const DEPTH_MAX_DEFAULT = 10_000;
/** Most queues one depth read of every queue covers (queue names in order). */
export const DEPTH_QUEUES_DEFAULT = 200;

/** How deep one queue is: each count read from index entries and stopped at the read's `max`. */
export interface QueueDepthRow extends QueueDepth {
  readonly queue: string;
  /** Dead jobs not yet re-driven. */
  readonly dead: BoundedCount;
}

/** @deprecated The shape of `sluice.stats()`; `queues.depth()` says which counts are exact. */
export interface QueueStats {
  readonly queue: string;
  readonly ready: number;
  readonly delayed: number;
  readonly running: number;
  readonly dead: number;
  /** Age of the oldest ready job, or null when none is ready. */
  readonly oldestReadyMs: number | null;
}

export interface DepthOptions {
  /** One queue only; by default every queue (`list()`), up to `maxQueues`. */
  readonly queue?: string;
  /**
   * Each count stops after this many index entries (it is then `exact: false`, "at least").
   * @defaultValue 10000
   */
  readonly max?: number;
  /** @defaultValue 200 */
  readonly maxQueues?: number;
}

/**
 * `sluice.queues`: the queues of the install — their names, how deep each is, and pausing. Every
 * call is a bounded number of index reads, whatever the size of the tables.
 */
export function queuesApi(db: Executor, tables: Tables, guard: Guard) {
  const depthOf = async (queue: string, max: number): Promise<QueueDepthRow> => {
    const [depth, dead] = await Promise.all([
      queueDepth(db, tables, queue, { max }),
      countJobs(db, tables, { queue, state: 'dead' }, { max }),
    ]);
    return { queue, ...depth, dead };
  };
  return {
    /** The queues that have live jobs, dead jobs or a pause row, in name order (at most `max`). */
    list: (options: { max?: number } = {}): Promise<string[]> =>
      guard(() => listQueueNames(db, tables, integerIn('max', options.max ?? DEPTH_QUEUES_DEFAULT, 1, 10_000))),
    /** Ready, not yet due, running and dead jobs per queue, and the oldest ready job's wait. */
    depth: (options: DepthOptions = {}): Promise<QueueDepthRow[]> =>
      guard(async () => {
        const max = integerIn('max', options.max ?? DEPTH_MAX_DEFAULT, 1, 1_000_000);
        const queues =
          options.queue !== undefined
            ? [options.queue]
            : await listQueueNames(
                db,
                tables,
                integerIn('maxQueues', options.maxQueues ?? DEPTH_QUEUES_DEFAULT, 1, 10_000),
              );
        const rows: QueueDepthRow[] = [];
        for (const queue of queues) rows.push(await depthOf(queue, max));
        return rows;
      }),
    /** No worker claims from a paused queue; jobs already running finish. */
    pause: (queue: string): Promise<void> => guard(() => pauseQueue(db, tables, queue)),
    resume: (queue: string): Promise<void> => guard(() => resumeQueue(db, tables, queue)),
    /** The queues paused now, with when. */
    paused: (): Promise<{ queue: string; pausedAt: Date }[]> => guard(() => pausedQueues(db, tables)),
  };
}

export type QueuesApi = ReturnType<typeof queuesApi>;
