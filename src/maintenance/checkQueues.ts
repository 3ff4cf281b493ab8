import type { PromiseBroken, PromiseKept } from '../events.ts';
import { listQueueNames } from '../queues/listQueueNames.ts';
import {
  MAX_PROMISES,
  markPromiseBroken,
  markPromiseKept,
  type QueuePromiseState,
  queuePromises,
} from '../queues/queuePromises.ts';
import { OTHERS_QUEUE, othersDepth } from '../stats/othersDepth.ts';
import { type QueueDepth, queueDepths } from '../stats/queueDepth.ts';
import { type QueueDepthReading, recordQueueDepths } from '../stats/recordedDepth.ts';
import type { MaintenanceTask, TaskDb } from '../task/MaintenanceTask.ts';
import type { MonotonicClock } from './UnchangedSince.ts';

/** Queues per depth read (queueDepths): its statements each cover at most this many. */
const QUEUES_PER_READ = 1_000;

export interface CheckQueuesOptions {
  /** Passes within this long of the last reading (on `clock`) skip it. */
  readonly intervalMs: number;
  readonly clock: MonotonicClock;
  /** Most queues read in one pass, in name order; every promised queue is read besides, by key. */
  readonly maxQueues: number;
  /** Each count stops after this many index entries (a ready-count promise reads one past its limit). */
  readonly depthMax: number;
  /** A promise was found broken: called once, when its state changed. */
  readonly onBroken: (broken: PromiseBroken) => void;
  /** A broken promise was found kept again: called once, when its state changed. */
  readonly onKept: (kept: PromiseKept) => void;
}

/** What a promise is measured on, and how it was broken. */
export type Breach = PromiseBroken['breaches'][number];

/**
 * Once per pass, reads how deep the first `maxQueues` queues in name order and every promised queue
 * are — the bounded index reads of sluice.queues.depth(): ready, not yet due and running jobs from
 * ix_head's covering ranges, the oldest ready job's wait, dead jobs — and the queues past those,
 * summed into one reading named `(others)` (othersDepth: how many queues, their jobs by state);
 * records the readings (the metrics scrape serves them in one statement, whatever the number of
 * queues or jobs), and holds every promised queue to its promise (sluice.queues.setPromise).
 *
 * A promise's state lives in its queue's row (`promise_broken_at`), not in this process: a broken
 * promise is written once, by a statement that matches only a kept one, and reported once (event
 * and log line) by whichever leader wrote it; it stays broken through passes and changes of leader
 * until a pass finds it kept, which is written and reported once the same way. A paused queue is
 * judged like any other: its jobs wait all the same. A pass within intervalMs of the last reading
 * (this process's clock) reads nothing. Counts: the promises broken and kept in this pass (state
 * changes, not queues behind).
 */
export function checkQueues(
  { db, tables }: TaskDb,
  options: CheckQueuesOptions,
): MaintenanceTask<'checkQueues', 'broken' | 'kept', CheckQueuesOptions> {
  /** Every queue's depth in a few statements (queueDepths); a ready-count promise reads one past its limit. */
  const read = async (
    queues: readonly string[],
    promises: ReadonlyMap<string, QueuePromiseState>,
  ): Promise<QueueDepthReading[]> => {
    const max = Math.max(options.depthMax, ...[...promises.values()].map((p) => (p.maxReady ?? 0) + 1));
    const depths = await queueDepths(db, tables, queues, { max });
    return queues.map((queue) => ({ queue, ...(depths.get(queue) as QueueDepth) }));
  };
  /** Every promised queue's promise: a page of MAX_PROMISES per statement, until a short page. */
  const everyPromise = async (): Promise<Map<string, QueuePromiseState>> => {
    const promises = new Map<string, QueuePromiseState>();
    for (let after = ''; ; ) {
      const page = await queuePromises(db, tables, after);
      for (const p of page) promises.set(p.queue, p);
      const last = page[page.length - 1];
      if (page.length < MAX_PROMISES || last === undefined) return promises;
      after = last.queue;
    }
  };
  let readAt = Number.NEGATIVE_INFINITY;
  return {
    name: 'checkQueues',
    options,
    async runOnce() {
      const now = options.clock();
      if (now - readAt < options.intervalMs) return { broken: 0, kept: 0 };
      readAt = now;
      const promises = await everyPromise();
      const listed = (await listQueueNames(db, tables, { limit: options.maxQueues })).map((q) => q.name);
      const names = new Set(listed);
      for (const queue of promises.keys()) names.add(queue);
      // A thousand queues per read: the listing's run first, then the promised queues past it, by key.
      const sorted = [...names].sort();
      const readings: QueueDepthReading[] = [];
      for (let i = 0; i < sorted.length; i += QUEUES_PER_READ)
        readings.push(...(await read(sorted.slice(i, i + QUEUES_PER_READ), promises)));
      // A full listing may have left queues out: their sums are recorded as `(others)`, never dropped.
      const last = listed[listed.length - 1];
      if (listed.length === options.maxQueues && last !== undefined) {
        const exclude = [...promises.keys()].filter((q) => q > last);
        const others = await othersDepth(db, tables, { after: last, exclude, max: options.depthMax });
        readings.push({ queue: OTHERS_QUEUE, ...others, oldestReadyMs: null });
      }
      await recordQueueDepths(db, tables, readings);
      let broken = 0;
      let kept = 0;
      for (const reading of readings) {
        const promise = promises.get(reading.queue);
        if (!promise) continue;
        const breaches = breachesOf(promise, reading);
        const measured = {
          queue: reading.queue,
          startWithinMs: promise.startWithinMs,
          maxReady: promise.maxReady,
          oldestReadyMs: reading.oldestReadyMs,
          ready: reading.ready,
        };
        if (breaches.length > 0 && promise.brokenAt === null) {
          if (await markPromiseBroken(db, tables, reading.queue)) {
            broken++;
            options.onBroken({ ...measured, breaches });
          }
        } else if (breaches.length === 0 && promise.brokenAt !== null) {
          if (await markPromiseKept(db, tables, reading.queue)) {
            kept++;
            options.onKept({ ...measured, brokenForMs: promise.brokenForMs ?? 0 });
          }
        }
      }
      return { broken, kept };
    },
  };
}

/**
 * Pure: how a reading breaks a promise (empty: it keeps it). The oldest ready job waited longer
 * than startWithinMs; more than maxReady jobs are ready (the count read one entry past the limit,
 * so "at least" is enough to tell).
 */
export function breachesOf(
  promise: Pick<QueuePromiseState, 'startWithinMs' | 'maxReady'>,
  reading: Pick<QueueDepthReading, 'oldestReadyMs' | 'ready'>,
): Breach[] {
  const breaches: Breach[] = [];
  if (promise.startWithinMs !== null && reading.oldestReadyMs !== null && reading.oldestReadyMs > promise.startWithinMs)
    breaches.push('startWithin');
  if (promise.maxReady !== null && reading.ready.count > promise.maxReady) breaches.push('maxReady');
  return breaches;
}
