import { Gauge, type Registry } from 'prom-client';
import type { QueueLimitsState } from '../api/queuesApi.ts';

const REASONS = ['concurrency', 'rate', 'paused'] as const;

/**
 * The series of each queue with flow control (`sluice.queues.limits()`): its cap and rate, their
 * use now, the defaults for its groups (concurrency, rate, fair window), and whether the queue
 * holds its due jobs back (1 under the reason that does, 0 under the others), so a dashboard can
 * tell jobs held back by a limit from jobs waiting for a worker.
 */
export class LimitSeries {
  readonly #cap: Gauge<'queue'>;
  readonly #running: Gauge<'queue'>;
  readonly #rateLimit: Gauge<'queue'>;
  readonly #rateInterval: Gauge<'queue'>;
  readonly #rateUsed: Gauge<'queue'>;
  readonly #blocked: Gauge<'queue' | 'reason'>;
  readonly #groupConcurrency: Gauge<'queue'>;
  readonly #fairWindow: Gauge<'queue'>;
  readonly #groupHeld: Gauge<'queue'>;
  readonly #groupRateLimit: Gauge<'queue'>;
  readonly #groupRateInterval: Gauge<'queue'>;

  constructor(registry: Registry) {
    const gauge = <L extends string>(name: string, help: string, labelNames: L[]) =>
      new Gauge({ name, help, labelNames, registers: [registry] });
    this.#cap = gauge('sluice_queue_concurrency_cap', 'The queue’s cap: at most this many of its jobs run at once.', [
      'queue',
    ]);
    this.#running = gauge('sluice_queue_limited_running', 'Jobs of a limited queue claimed now, across the fleet.', [
      'queue',
    ]);
    this.#rateLimit = gauge('sluice_queue_rate_limit', 'The queue’s rate: at most this many starts per window.', [
      'queue',
    ]);
    this.#rateInterval = gauge('sluice_queue_rate_interval_seconds', 'The length of the queue’s rate window.', [
      'queue',
    ]);
    this.#rateUsed = gauge('sluice_queue_rate_used', 'Starts counted in the queue’s current rate window.', ['queue']);
    this.#blocked = gauge(
      'sluice_queue_blocked',
      'Whether the queue holds its due jobs back now (1), by reason: concurrency (at its cap), rate (window used up), paused (until a time).',
      ['queue', 'reason'],
    );
    this.#groupConcurrency = gauge(
      'sluice_queue_group_concurrency',
      'The queue’s default limit for each of its groups: at most this many of a group’s jobs at once.',
      ['queue'],
    );
    this.#fairWindow = gauge(
      'sluice_queue_fair_window',
      'A fair queue’s window: the jobs each group keeps live and unheld.',
      ['queue'],
    );
    this.#groupHeld = gauge(
      'sluice_queue_group_held',
      'Jobs held back by their group’s limit or the fair window (not waiting for a worker), counted up to 10,000.',
      ['queue'],
    );
    this.#groupRateLimit = gauge(
      'sluice_queue_group_rate_limit',
      'The queue’s default rate for each of its groups: at most this many of a group’s starts per window.',
      ['queue'],
    );
    this.#groupRateInterval = gauge(
      'sluice_queue_group_rate_interval_seconds',
      'The length of the window of the queue’s default group rate.',
      ['queue'],
    );
  }

  set(limits: readonly QueueLimitsState[]): void {
    for (const g of [this.#cap, this.#running, this.#rateLimit, this.#rateInterval, this.#rateUsed, this.#blocked])
      g.reset();
    for (const g of [
      this.#groupConcurrency,
      this.#fairWindow,
      this.#groupHeld,
      this.#groupRateLimit,
      this.#groupRateInterval,
    ])
      g.reset();
    for (const l of limits) {
      const queue = { queue: l.queue };
      if (l.concurrency !== null) this.#cap.set(queue, l.concurrency);
      this.#running.set(queue, l.running);
      if (l.rate !== null) {
        this.#rateLimit.set(queue, l.rate.limit);
        this.#rateInterval.set(queue, l.rate.intervalMs / 1000);
        this.#rateUsed.set(queue, l.rateUsed);
      }
      if (l.groupConcurrency !== null) this.#groupConcurrency.set(queue, l.groupConcurrency);
      if (l.fairWindow !== null) this.#fairWindow.set(queue, l.fairWindow);
      if (l.groupConcurrency !== null || l.fairWindow !== null) this.#groupHeld.set(queue, l.groupHeld);
      if (l.groupRate !== null) {
        this.#groupRateLimit.set(queue, l.groupRate.limit);
        this.#groupRateInterval.set(queue, l.groupRate.intervalMs / 1000);
      }
      for (const reason of REASONS) this.#blocked.set({ queue: l.queue, reason }, l.blocked === reason ? 1 : 0);
    }
  }
}
