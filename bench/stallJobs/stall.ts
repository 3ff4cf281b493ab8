import { setTimeout as sleep } from 'node:timers/promises';
import { defineJob } from 'sluice';

interface StallPayload {
  /** How long the handler blocks its worker's event loop, synchronously. */
  readonly blockMs: number;
  /** An ordinary wait first, so the stall starts at a random point of the heartbeat period. */
  readonly phaseMs: number;
}

/**
 * The stall bench's job: on its first attempt it waits phaseMs, then spins the CPU for blockMs
 * (no heartbeat, no I/O in the worker meanwhile). A later attempt — the maintenance process took
 * the claim back while the worker was frozen — returns at once, so each job ends with retry_times
 * 0 (the claim survived the stall) or more (it was lost).
 */
export default defineJob<StallPayload>({
  name: 'stall',
  maxRetries: 5,
  backoff: { type: 'fixed', delayMs: 0 },
  async handle(payload, ctx) {
    if (ctx.job.retryTimes > 0) return;
    await sleep(payload.phaseMs);
    const until = Date.now() + payload.blockMs;
    while (Date.now() < until) {
      // busy: the whole worker process is frozen
    }
  },
});
