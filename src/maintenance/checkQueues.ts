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
import { StepBudget } from './StepBudget.ts';
import type { MonotonicClock } from './UnchangedSince.ts';

/** Most queues per depth read (queueDepths); a pass's budget is checked after each read. */
const QUEUES_PER_READ = 100;
/** Queues in a cycle's first read: it grows (×4 a read, up to QUEUES_PER_READ) while reads stay light. */
const FIRST_READ = 10;
/** Index entries a read aims at: the next read covers as many queues as the last one's entries per queue allow. */
const ENTRIES_PER_READ = 20_000;

/** A reading of every queue that may take several passes: what it reads, and how far it got. */
interface Cycle {
  /** The listed queues and every promised one, in name order. */
  readonly names: readonly string[];
  readonly promises: ReadonlyMap<string, QueuePromiseState>;
  /** The listing's last name when it came back full (the queues past it are summed as `(others)`), else null. */
  readonly othersAfter: string | null;
  next: number;
  /** Queues in the next read. */
  perRead: number;
}

export interface CheckQueuesOptions {
  /** Passes within this long of the last reading (on `clock`) skip it. */
  readonly intervalMs: number;
  readonly clock: MonotonicClock;
  /** Most queues read in one pass, in name order; every promised queue is read besides, by key. */
  readonly maxQueues: number;
  /** Each count stops after this many index entries (a ready-count promise reads one past its limit). */
  readonly depthMax: number;
  /**
   * How long one pass keeps reading (on `clock`): it stops after the read that crossed it (or
   * what is left of the pass's budget, if less), and the next pass goes on from there, ignoring intervalMs until every queue is read.
   */
  readonly budgetMs: number;
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
 * (this process's clock) reads nothing. A pass reads up to a hundred queues per statement set
 * (nextReadSize: about 20,000 index entries a read, so fewer queues where they are deep; a cycle
 * starts at 10 and grows) until `budgetMs` has gone by, and the next pass goes on from there
 * (whatever intervalMs says), so a pass stays within its budget whatever the number of queues and
 * promises, and every queue is read within ceil((maxQueues + promises) ÷ queues per read) passes,
 * one pass while the budget allows (the queues'
 * recorded readings of a cycle come from its passes; those of queues gone since are forgotten at
 * its end). Counts: the promises broken and kept in this pass (state changes, not queues behind).
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
  /** Begins a reading of every queue: the promises, the first `maxQueues` queues in name order. */
  const begin = async (): Promise<Cycle> => {
    const promises = await everyPromise();
    const page = await listQueueNames(db, tables, { limit: options.maxQueues });
    const names = new Set(page.names.map((q) => q.name));
    for (const queue of promises.keys()) names.add(queue);
    return { names: [...names].sort(), promises, othersAfter: page.next, next: 0, perRead: FIRST_READ };
  };
  let readAt = Number.NEGATIVE_INFINITY;
  let cycle: Cycle | null = null;
  return {
    name: 'checkQueues',
    options,
    async runOnce(passLeftMs = Number.POSITIVE_INFINITY) {
      const now = options.clock();
      // A cycle's first listing counts as this pass's first step.
      const budget = new StepBudget(options.clock, Math.min(options.budgetMs, passLeftMs));
      if (cycle === null) {
        if (now - readAt < options.intervalMs) return { broken: 0, kept: 0 };
        readAt = now;
        cycle = await begin();
      }
      const { names, promises, othersAfter } = cycle;
      // Reads of up to a hundred queues, from where the last pass stopped, until the budget is spent.
      const readings: QueueDepthReading[] = [];
      while (cycle.next < names.length) {
        const chunk = names.slice(cycle.next, cycle.next + cycle.perRead);
        const chunkReadings = await read(chunk, promises);
        readings.push(...chunkReadings);
        cycle.next += chunk.length;
        cycle.perRead = nextReadSize(chunkReadings, cycle.perRead);
        if (budget.stepped()) break;
      }
      const done = cycle.next >= names.length;
      // A full listing may have left queues out: their sums are recorded as `(others)`, never dropped.
      if (done && othersAfter !== null) {
        const exclude = [...promises.keys()].filter((q) => q > othersAfter);
        const others = await othersDepth(db, tables, { after: othersAfter, exclude, max: options.depthMax });
        readings.push({ queue: OTHERS_QUEUE, ...others, oldestReadyMs: null });
      }
      // The readings of queues gone since are forgotten once every queue has been read.
      const cycleQueues = done ? [...names, ...(othersAfter === null ? [] : [OTHERS_QUEUE])] : null;
      await recordQueueDepths(db, tables, readings, cycleQueues);
      if (done) cycle = null;
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
 * Pure: how many queues the next depth read covers, from what the last one read: as many as keep
 * it near ENTRIES_PER_READ index entries at the last read's entries per queue, at least 1 and at
 * most four times the last (so a cycle's reads grow from FIRST_READ while they stay light).
 */
export function nextReadSize(readings: readonly QueueDepthReading[], last: number): number {
  let entries = 0;
  for (const r of readings) entries += r.ready.count + r.notDue.count + r.held.count + r.running.count + r.dead.count;
  const perQueue = Math.max(1, entries / Math.max(1, readings.length));
  return Math.max(1, Math.min(QUEUES_PER_READ, 4 * last, Math.floor(ENTRIES_PER_READ / perQueue)));
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
