import type { LoadReading } from '../stats/processStats.ts';

export interface ConcurrencyPolicy {
  /** Above this CPU busy fraction the worker claims less. */
  readonly maxCpu: number;
  /** Below this free-memory fraction the worker claims less. */
  readonly minFreeMem: number;
}

/**
 * Pure: the next limit on jobs this worker runs at once. Overloaded (CPU above maxCpu or free
 * memory below minFreeMem): halve, down to 1. Room to spare: grow by a tenth of the configured
 * concurrency (at least 1), up to it. Additive increase, multiplicative decrease, as TCP does,
 * so a fleet backs off fast and recovers without oscillating.
 */
export function nextConcurrencyLimit(current: number, concurrency: number, reading: LoadReading, policy: ConcurrencyPolicy): number {
  const overloaded = reading.cpu > policy.maxCpu || reading.freeMem < policy.minFreeMem;
  if (overloaded) return Math.max(1, Math.floor(current / 2));
  return Math.min(concurrency, current + Math.max(1, Math.ceil(concurrency / 10)));
}

/** Pure: the next idle poll delay — doubled after each empty poll, up to the maximum; reset after a claim. */
export function nextPollDelayMs(current: number, claimed: boolean, pollIntervalMs: number, maxPollIntervalMs: number): number {
  if (claimed) return pollIntervalMs;
  return Math.min(maxPollIntervalMs, Math.max(pollIntervalMs, current * 2));
}
