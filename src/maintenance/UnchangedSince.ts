/** A monotonic clock in milliseconds (performance.now() in production; tests pass one they move). */
export type MonotonicClock = () => number;

export const monotonicClock: MonotonicClock = () => performance.now();

/**
 * Liveness judged on one clock: the observer's own. For each thing it watches (a worker's registry
 * row, a claimed job, the lease row) it keeps the last value it read and when, on its own
 * monotonic clock, it first read that value. How long a value has stood unchanged is then the
 * difference of two readings of one clock, whatever clock wrote the value: no time written by
 * NOW(3) on one server is ever compared with NOW(3) on another (a Galera node ahead by 10 s no
 * longer makes every other node's workers look 10 s older).
 *
 * The price: what is seen for the first time has stood unchanged for 0 ms, so a freshly started
 * observer waits one full timeout before it calls anything dead or stale, and a value that
 * changed between two observations is only known to have changed at the second: the age it
 * reports is at most the true age (never more), so it errs towards "alive".
 */
export class UnchangedSince<K> {
  readonly #seen = new Map<K, { value: string; since: number }>();

  constructor(private readonly clock: MonotonicClock) {}

  /** Records what was read of `key` now; returns for how long (ms) it has been read unchanged: 0 the first time and after each change. */
  see(key: K, value: string): number {
    const now = this.clock();
    const last = this.#seen.get(key);
    if (last && last.value === value) return now - last.since;
    this.#seen.set(key, { value, since: now });
    return 0;
  }

  /** Forgets `key` (it is gone, or was just acted on). */
  forget(key: K): void {
    this.#seen.delete(key);
  }

  /** Forgets every key not in `present` (rows a complete walk no longer found). */
  keepOnly(present: ReadonlySet<K>): void {
    for (const key of this.#seen.keys()) if (!present.has(key)) this.#seen.delete(key);
  }

  get size(): number {
    return this.#seen.size;
  }
}
