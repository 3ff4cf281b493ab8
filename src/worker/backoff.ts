import type { Backoff } from '../types.ts';

/** Pure: milliseconds to wait before retry number `retryTimes` (1 = first retry). */
export function backoffDelayMs(backoff: Backoff, retryTimes: number, error: Error): number {
  if (typeof backoff === 'function') return Math.max(0, Number(backoff(retryTimes, error)) || 0);
  if (backoff.type === 'fixed') return backoff.delayMs;
  const cap = backoff.maxDelayMs ?? 3_600_000;
  const raw = Math.min(cap, backoff.delayMs * 2 ** Math.max(0, retryTimes - 1));
  const jitter = backoff.jitter ?? 0.2;
  return Math.max(0, Math.round(raw * (1 - jitter + Math.random() * 2 * jitter)));
}
