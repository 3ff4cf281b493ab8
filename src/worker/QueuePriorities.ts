import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { freePriorityBounds, nextFreePriority } from '../queues/nextFreePriority.ts';

/**
 * The distinct priorities of each queue's free jobs, so that the head scan can be the bounded
 * range `priority IN (…) AND run_at <= NOW(3)`. Without it, ORDER BY priority, run_at walks every
 * not-yet-due job of a better priority before it finds the due ones (a million delayed jobs make
 * every poll read a million index entries). The set is found by one statement for its lowest and
 * highest value (a queue of one priority, or none, needs no more), then one MIN() seek per value
 * between (nextFreePriority; walks over many queues read theirs in batches instead) and kept for up to
 * `maxAgeMs`; the claimer refreshes it early whenever a head comes back short. Cost of the cache:
 * a job with a priority value its queue did not have a moment ago may wait up to `maxAgeMs`
 * behind busier, worse-priority work.
 */
export class QueuePriorities {
  readonly #cache = new Map<string, { priorities: number[]; readAt: number }>();

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    private readonly maxAgeMs: number,
  ) {}

  /** The cached set, refreshed first if older than maxAgeMs. */
  async get(queue: string): Promise<number[]> {
    const entry = this.#cache.get(queue);
    if (entry && Date.now() - entry.readAt < this.maxAgeMs) return entry.priorities;
    return this.refresh(queue);
  }

  /** Reads the set now. */
  async refresh(queue: string): Promise<number[]> {
    const priorities: number[] = [];
    const bounds = await freePriorityBounds(this.db, this.tables, queue);
    if (bounds !== null) {
      priorities.push(bounds.lowest);
      for (let after = bounds.lowest; after < bounds.highest; ) {
        const priority = await nextFreePriority(this.db, this.tables, queue, after);
        if (priority === null) break;
        priorities.push(priority);
        after = priority;
      }
    }
    this.#cache.set(queue, { priorities, readAt: Date.now() });
    return priorities;
  }
}

/** Pure: whether two ascending priority lists hold the same values. */
export function samePriorities(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}
