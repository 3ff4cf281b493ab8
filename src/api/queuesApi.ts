import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import { type GroupLimits, type GroupState, listGroups, setGroupLimits } from '../groups/groupLimits.ts';
import { integerIn, optionKeys, rejectUnknownKeys } from '../options.ts';
import { listQueueNames } from '../queues/listQueueNames.ts';
import { pausedQueues, pauseQueue, resumeQueue } from '../queues/pauseQueue.ts';
import { type QueueLimitsState, queueLimits, setQueueLimits } from '../queues/queueLimits.ts';
import { type QueuePromise, type QueuePromiseState, queuePromises, setQueuePromise } from '../queues/queuePromises.ts';
import type { QueueLimits } from '../queues/validateLimits.ts';
import { type OthersDepth, othersDepth } from '../stats/othersDepth.ts';
import { type BoundedCount, DEPTH_MAX_DEFAULT, DEPTH_QUEUES_DEFAULT, queueDepths } from '../stats/queueDepth.ts';
import { type QueueDepthReading, type RecordedQueueDepth, recordedQueueDepths } from '../stats/recordedDepth.ts';

export type {
  BoundedCount,
  GroupLimits,
  GroupState,
  OthersDepth,
  QueueLimits,
  QueueLimitsState,
  QueuePromise,
  QueuePromiseState,
  RecordedQueueDepth,
};

import { type RingTarget, ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import type { Guard } from './Guard.ts';

export { DEPTH_MAX_DEFAULT, DEPTH_QUEUES_DEFAULT };

const LIST_KEYS = optionKeys<QueueListOptions>({ max: true, after: true });
const GROUPS_KEYS = optionKeys<{ after?: string; limit?: number }>({ after: true, limit: true });
const RECORDED_KEYS = optionKeys<{ maxQueues?: number }>({ maxQueues: true });
const PROMISE_KEYS = optionKeys<QueuePromise>({ startWithinMs: true, maxReady: true });
const LIMITS_KEYS = optionKeys<QueueLimits>({
  concurrency: true,
  rate: true,
  groupConcurrency: true,
  fair: true,
  fairWindow: true,
  groupRate: true,
});
const DEPTH_KEYS = optionKeys<DepthOptions>({ queue: true, queues: true, max: true, maxQueues: true });
const GROUP_LIMITS_KEYS = optionKeys<GroupLimits>({ concurrency: true, rate: true });

/** Most queues one read of the recorded depth returns: every queue a pass reads (promised ones too). */
export const RECORDED_QUEUES_DEFAULT = 2_000;

/** How deep one queue is: each count read from index entries and stopped at the read's `max`. */
export type QueueDepthRow = QueueDepthReading;

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

export interface QueueListOptions {
  /** Most names in the page. @defaultValue 200 (at most 10,000) */
  readonly max?: number;
  /** Names after this one (a page's `next`). @defaultValue from the first */
  readonly after?: string;
}

/** A page of queue names (`sluice.queues.list()`). */
export interface QueueList {
  readonly queues: string[];
  /** Pass as `after` for the next page; null when no queue follows. */
  readonly next: string | null;
}

export interface DepthOptions {
  /**
   * One queue only; by default the first page of `list({ max: maxQueues })` (to read on, or to
   * sum the queues past a page by `others(next)`, list the queues and pass them as `queues`).
   */
  readonly queue?: string;
  /** These queues (at most 10,000), rather than one or the first `maxQueues`. */
  readonly queues?: readonly string[];
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
export function queuesApi(db: Executor, tables: Tables, guard: Guard, ring: RingTarget) {
  const list = async (max: number, after?: string): Promise<QueueList> => {
    const page = await listQueueNames(db, tables, { limit: max, ...(after === undefined ? {} : { after }) });
    return { queues: page.names.map((q) => q.name), next: page.next };
  };
  return {
    /**
     * The queues that have live jobs, dead jobs or a pause row, in name order: a page of at most
     * `max` after `after`, and `next`, where the next page starts (null when no queue follows). A
     * page may hold fewer than `max` and still have a next one: on a table where the server will
     * not list queues by a loose index scan the listing reads the index in bounded steps, and stops.
     */
    list: (options: QueueListOptions = {}): Promise<QueueList> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.list(options)', options, LIST_KEYS);
        if (options.after !== undefined && typeof options.after !== 'string')
          throw new OptionsError('after', 'must be a queue name to read on from');
        return list(integerIn('max', options.max ?? DEPTH_QUEUES_DEFAULT, 1, 10_000), options.after);
      }),
    /**
     * Ready, not yet due, running and dead jobs per queue, and the oldest ready job's wait: a few
     * statements however many queues (queueDepths), each count stopped at `max`.
     */
    depth: (options: DepthOptions = {}): Promise<QueueDepthRow[]> =>
      guard(async () => {
        rejectUnknownKeys('sluice.queues.depth(options)', options, DEPTH_KEYS);
        const max = integerIn('max', options.max ?? DEPTH_MAX_DEFAULT, 1, 1_000_000);
        const queues =
          options.queues ??
          (options.queue !== undefined
            ? [options.queue]
            : (await list(integerIn('maxQueues', options.maxQueues ?? DEPTH_QUEUES_DEFAULT, 1, 10_000))).queues);
        const depths = await queueDepths(db, tables, queues, { max });
        return [...depths].map(([queue, depth]) => ({ queue, ...depth }));
      }),
    /**
     * The queues named after `after` (a listing's last name), summed: how many queues with live
     * jobs, and their ready, not yet due, held, running and dead jobs — what a page or a table that
     * shows the first queues shows as its "others" row. One statement reading at most `max` index
     * entries of the live jobs and `max` of the dead ones (each sum "at least" past it).
     */
    others: (after: string, options: { max?: number } = {}): Promise<OthersDepth> =>
      guard(() => {
        if (typeof after !== 'string') throw new OptionsError('after', 'must be the last queue name shown');
        rejectUnknownKeys('sluice.queues.others(after, options)', options, ['max']);
        const max = integerIn('max', options.max ?? DEPTH_MAX_DEFAULT, 1, 1_000_000);
        return othersDepth(db, tables, { after, exclude: [], max });
      }),
    /** No worker claims from a paused queue; jobs already running finish. */
    pause: (queue: string): Promise<void> => guard(() => pauseQueue(db, tables, queue)),
    /** Workers claim from the queue again. Idempotent. */
    resume: (queue: string): Promise<void> => guard(() => resumeQueue(db, tables, queue)),
    /**
     * The queues paused now, with when: one statement, a page of the first 1,000 in name order, or
     * of those after `after` (pass the last name shown for the next page).
     */
    paused: (options: { after?: string } = {}): Promise<{ queue: string; pausedAt: Date }[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.paused(options)', options, ['after']);
        if (options.after !== undefined && typeof options.after !== 'string')
          throw new OptionsError('after', 'must be a queue name to read on from');
        return pausedQueues(db, tables, options.after);
      }),
    /**
     * Sets a queue's latency promise — `{ startWithinMs: 30_000 }` (a ready job starts within
     * 30 s), `{ maxReady: 10_000 }` (no more than 10,000 ready), or both — for every process of
     * the install; `null` withdraws it. The maintenance leader holds the queue to it at each pass:
     * a broken promise raises `promise:broken` (and a log line) once, and `promise:kept` once when
     * it is met again; the dashboard and the metrics show it.
     */
    setPromise: (queue: string, promise: QueuePromise | null): Promise<void> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.setPromise(queue, promise)', promise, PROMISE_KEYS);
        return setQueuePromise(db, tables, queue, promise);
      }),
    /**
     * Sets a queue's flow-control limits for every worker of the fleet, taking effect without a
     * restart: `{ concurrency: 20 }` (at most 20 of its jobs running at once anywhere), `{ rate: {
     * limit: 100, intervalMs: 60_000 } }` (at most 100 starts a minute), or both. A key left out
     * stays as it is; null removes that limit. A queue without limits costs its claims nothing.
     */
    setLimits: (queue: string, limits: QueueLimits): Promise<void> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.setLimits(queue, limits)', limits, LIMITS_KEYS);
        return setQueueLimits(db, tables, queue, limits);
      }),
    /**
     * Sets one group's own limits: `concurrency` (`1`: one of its jobs at a time, fleet-wide), and
     * `rate` (`{ limit: 10, intervalMs: 1_000 }`: at most 10 of its jobs start a second, reserved as
     * they are enqueued; jobs already enqueued keep their starts). null: the queue's default applies
     * again. Releases at once the held jobs a new concurrency limit has room for, and resolves to how
     * many it released.
     */
    setGroupLimits: (queue: string, group: string, limits: GroupLimits): Promise<number> =>
      guard(async () => {
        rejectUnknownKeys('sluice.queues.setGroupLimits(queue, group, limits)', limits, GROUP_LIMITS_KEYS);
        const released = await setGroupLimits(db, tables, queue, group, limits);
        ringAfterCommit(ring, undefined, new Map(released > 0 ? [[queue, released]] : []));
        return released;
      }),
    /**
     * One page of a queue's groups (in key order, after `after`; at most `limit`, default 100, up to
     * 1,000), each with its own limit, the limit in force and its slots taken, its own rate, the
     * rate in force and the starts reserved in its current window, the earliest start of a job of
     * the group enqueued now, and its pause: one statement.
     */
    groups: (queue: string, options: { after?: string; limit?: number } = {}): Promise<GroupState[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.groups(queue, options)', options, GROUPS_KEYS);
        return listGroups(db, tables, queue, options);
      }),
    /**
     * The queues with a limit or a pause-until, each with its current use (jobs running, starts in
     * this rate window, jobs held for their group) and whether it holds jobs back now: one statement.
     * Without options, the first 1,000 such queues in name order; with `queues` (at most 1,000
     * names), those of them that are limited, read by key — how to read one queue's limits.
     */
    limits: (options: { queues?: readonly string[] } = {}): Promise<QueueLimitsState[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.limits(options)', options, ['queues']);
        return queueLimits(db, tables, options.queues);
      }),
    /**
     * The queues with a promise, with whether each is kept (as the maintenance leader last judged
     * it, every promise at every pass): one statement, a page of the first 1,000 in name order, or
     * of those after `after`.
     */
    promises: (options: { after?: string } = {}): Promise<QueuePromiseState[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.promises(options)', options, ['after']);
        if (options.after !== undefined && typeof options.after !== 'string')
          throw new OptionsError('after', 'must be a queue name to read on from');
        return queuePromises(db, tables, options.after);
      }),
    /**
     * Each queue's depth as the maintenance leader last read it (once per pass, bounded index
     * reads), with the reading's age: one statement whatever the number of queues or jobs — what
     * the metrics scrape serves. Empty until a maintenance process has run a pass.
     */
    recordedDepth: (options: { maxQueues?: number } = {}): Promise<RecordedQueueDepth[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.queues.recordedDepth(options)', options, RECORDED_KEYS);
        return recordedQueueDepths(
          db,
          tables,
          integerIn('maxQueues', options.maxQueues ?? RECORDED_QUEUES_DEFAULT, 1, 100_000),
        );
      }),
  };
}

export type QueuesApi = ReturnType<typeof queuesApi>;
