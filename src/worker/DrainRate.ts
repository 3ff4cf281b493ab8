/**
 * How many jobs a claim may take beyond the free slots (the lookahead): what the slots finish in
 * about LOOKAHEAD_ROUND_TRIPS claim round trips, at the rate they finished jobs lately, and at
 * most LOOKAHEAD_FACTOR times the slots. At low concurrency a claim of only the free slots leaves
 * them empty for a round trip after every few jobs, and pays a commit for each few: claimed jobs
 * waiting in the worker start the moment a slot frees, and fewer, larger claims commit less often.
 * A slow job type finishes few jobs per round trip, so it looks ahead by none: it never holds work
 * that another process could start sooner.
 */
const LOOKAHEAD_ROUND_TRIPS = 2;
/**
 * The cap, in slots: jobs held beyond the slots at most. Measured with no-op jobs at 1 process ×
 * 10 slots (bench/drainAB.ts, A/B in one run): a cap of 4 drained 1.0×, 16 about 1.75× and 64
 * about 2× the rate of 4 — little more for four times the jobs held. The drain rate, not the cap,
 * is what keeps a slow job type from holding work: the cap bounds what one process can take
 * from a short queue that others could share.
 */
const LOOKAHEAD_FACTOR = 16;
/** Weight of the latest reading in the rate's moving average. */
const WEIGHT = 0.3;

export class DrainRate {
  /** Jobs finished per ms (moving average over the claim loop's rounds). */
  #perMs = 0;
  #processed = 0;
  #at = performance.now();

  /**
   * The lookahead for a claim now, given the slots (`limit`), the claim round trip, and how many
   * jobs the worker has finished in all (`processed`, read at every round).
   */
  lookahead(limit: number, claimLatencyMs: number | null, processed: number): number {
    const now = performance.now();
    const elapsedMs = now - this.#at;
    if (elapsedMs >= 1) {
      const perMs = (processed - this.#processed) / elapsedMs;
      this.#perMs = WEIGHT * perMs + (1 - WEIGHT) * this.#perMs;
      this.#processed = processed;
      this.#at = now;
    }
    if (claimLatencyMs === null) return 0;
    return Math.min(LOOKAHEAD_FACTOR * limit, Math.floor(this.#perMs * claimLatencyMs * LOOKAHEAD_ROUND_TRIPS));
  }
}
