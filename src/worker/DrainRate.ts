/**
 * How many jobs a claim may take beyond the free slots (the lookahead): what the slots finish in
 * about LOOKAHEAD_ROUND_TRIPS claim round trips, at the rate they finished jobs lately, and at
 * most LOOKAHEAD_FACTOR times the slots. At low concurrency a claim of only the free slots leaves
 * them empty for a round trip after every few jobs, and pays a commit for each few: claimed jobs
 * waiting in the worker start the moment a slot frees, and fewer, larger claims commit less often.
 * A slow job type finishes few jobs per round trip, so it looks ahead by none: it never holds work
 * that another process could start sooner. Four round trips rather than two: with jobs that take
 * 2–10 ms (`npm run bench -- slots`, the two alternating, two rounds each), one worker kept 9.8 of 10
 * and 45.7–49.3 of 50 slots busy against 8.1–8.9 and 32.9–43.8, drained 10–39 % more jobs per
 * second, and sent 2–3 times fewer claims.
 */
const LOOKAHEAD_ROUND_TRIPS = 4;
/**
 * The cap, in slots: jobs held beyond the slots at most. It bounds what one process can take from
 * a short queue that others could share; the drain rate, not the cap, is what keeps a slow job
 * type from holding work. The claim goes out when half the room is free, so the cap also sets the
 * claim's size at low concurrency, and with it the statements and commits per job. Measured with
 * bench/drainAB.ts (the two caps alternating in one run, 3 rounds each, no-op jobs of ~100 B): at
 * 4 processes × 10 slots a cap of 16 drained 8,214–8,773 jobs/s in claims of ~57 jobs, 64 drained
 * 20,153–24,876 in claims of ~280 (32: 12,693–14,372 against 7,722–8,772); with 0–16 KiB payloads,
 * 5,785–6,964 against 3,959–4,487. From 16 slots up, claimBatchSize caps the lookahead first.
 */
const LOOKAHEAD_FACTOR = 64;
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
