import { Gauge, type Registry } from 'prom-client';
import type { QueuePromiseState, RecordedQueueDepth } from '../api/queuesApi.ts';

/**
 * The series of each queue: its depth as the maintenance leader last read it (the readings of
 * `sluice.queues.recordedDepth()`), how old that reading is, and its latency promise with whether
 * it is kept (`sluice.queues.promises()`). The queues the leader did not read one by one are summed
 * under queue="(others)", and `sluice_queue_depth_others` says how many they are.
 */
export class QueueSeries {
  readonly #jobs: Gauge<'queue' | 'state'>;
  readonly #dead: Gauge<'queue'>;
  readonly #oldest: Gauge<'queue'>;
  /** The same under its earlier name, deprecated: remove in the next minor version. */
  readonly #oldestDeprecated: Gauge<'queue'>;
  readonly #age: Gauge<'queue'>;
  readonly #broken: Gauge<'queue'>;
  readonly #startWithin: Gauge<'queue'>;
  readonly #maxReady: Gauge<'queue'>;
  readonly #others: Gauge;

  constructor(registry: Registry) {
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    this.#jobs = gauge(
      'sluice_jobs',
      'Live jobs by queue and state (ready, delayed, held, running); held jobs wait for parents or a limit.',
      ['queue', 'state'],
    );
    this.#dead = gauge('sluice_dead_jobs', 'Dead jobs (not re-driven) by queue.', ['queue']);
    this.#oldest = gauge('sluice_queue_oldest_ready_seconds', 'Age of the oldest ready job by queue (0: none ready).', [
      'queue',
    ]);
    this.#oldestDeprecated = gauge(
      'sluice_oldest_ready_seconds',
      'Deprecated: sluice_queue_oldest_ready_seconds under its earlier name.',
      ['queue'],
    );
    this.#age = gauge(
      'sluice_queue_depth_age_seconds',
      'How long ago the maintenance leader read the queue depth these series show (a pass, while one runs).',
      ['queue'],
    );
    this.#broken = gauge(
      'sluice_queue_promise_broken',
      'Whether the queue is behind its latency promise (1) or keeps it (0), as the maintenance leader judged it.',
      ['queue'],
    );
    this.#startWithin = gauge(
      'sluice_queue_promise_start_within_seconds',
      'The queue’s promise: a ready job starts within this long.',
      ['queue'],
    );
    this.#maxReady = gauge('sluice_queue_promise_max_ready', 'The queue’s promise: at most this many jobs ready.', [
      'queue',
    ]);
    this.#others = gauge(
      'sluice_queue_depth_others',
      'Queues without series of their own (past the first 200 in name order, not promised): the queue="(others)" series sum them. 0: every queue has its own.',
      [],
    );
  }

  set(depths: readonly RecordedQueueDepth[], promises: readonly QueuePromiseState[]): void {
    const all = [this.#jobs, this.#dead, this.#oldest, this.#oldestDeprecated, this.#age, this.#broken];
    for (const g of [...all, this.#startWithin, this.#maxReady]) g.reset();
    this.#others.set(0);
    for (const d of depths) {
      if (d.queues !== undefined) this.#others.set(d.queues.count);
      const queue = { queue: d.queue };
      this.#jobs.set({ queue: d.queue, state: 'ready' }, d.ready.count);
      this.#jobs.set({ queue: d.queue, state: 'delayed' }, d.notDue.count);
      this.#jobs.set({ queue: d.queue, state: 'held' }, d.held.count);
      this.#jobs.set({ queue: d.queue, state: 'running' }, d.running.count);
      this.#dead.set(queue, d.dead.count);
      // The (others) sums have no oldest wait of their own: no series rather than a false 0.
      const oldestSeconds = d.oldestReadyMs === null ? 0 : d.oldestReadyMs / 1000;
      if (d.queues === undefined) this.#oldest.set(queue, oldestSeconds);
      if (d.queues === undefined) this.#oldestDeprecated.set(queue, oldestSeconds);
      this.#age.set(queue, d.readAgeMs / 1000);
    }
    for (const p of promises) {
      const queue = { queue: p.queue };
      this.#broken.set(queue, p.brokenAt === null ? 0 : 1);
      if (p.startWithinMs !== null) this.#startWithin.set(queue, p.startWithinMs / 1000);
      if (p.maxReady !== null) this.#maxReady.set(queue, p.maxReady);
    }
  }
}
