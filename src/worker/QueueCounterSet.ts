import type { SluiceEvents, SluiceEventMap } from '../events.ts';
import type { QueueCounters } from '../workers/workerRegistry.ts';

/**
 * One worker's per-queue totals (completed, failed attempts, dead-lettered), counted from its own
 * events and written to its registry row at each heartbeat — the metrics endpoint sums the rows.
 */
export class QueueCounterSet {
  readonly #counts = new Map<string, QueueCounters>();
  readonly #off: (() => void)[] = [];

  constructor(
    private readonly events: SluiceEvents,
    private readonly workerId: string,
  ) {
    this.#count('job:completed', 'completed');
    this.#count('job:failed', 'failed');
    this.#count('job:dead', 'dead');
  }

  snapshot(): Record<string, QueueCounters> {
    return Object.fromEntries([...this.#counts].map(([queue, c]) => [queue, { ...c }]));
  }

  close(): void {
    for (const off of this.#off) off();
  }

  #count<K extends 'job:completed' | 'job:failed' | 'job:dead'>(event: K, field: keyof QueueCounters): void {
    const listener = (e: SluiceEventMap[K]) => {
      if (e.workerId !== this.workerId) return;
      const counts = this.#counts.get(e.queue) ?? { completed: 0, failed: 0, dead: 0 };
      counts[field]++;
      this.#counts.set(e.queue, counts);
    };
    this.events.on(event, listener);
    this.#off.push(() => this.events.off(event, listener));
  }
}
