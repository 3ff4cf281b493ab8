import type { Backoff, StoredBackoff } from './job.ts';

const MAX_DELAY_MS = 365 * 24 * 3600 * 1000;

/** Pure: why a backoff value is unusable, or null when it is fine. Functions pass (definitions only). */
export function backoffProblem(value: unknown, allowFunction: boolean): string | null {
  if (typeof value === 'function')
    return allowFunction
      ? null
      : 'must be {type: "fixed"|"exponential", delayMs, …} (a function cannot be stored with a job)';
  if (typeof value !== 'object' || value === null) return 'must be an object or a function';
  const b = value as Partial<StoredBackoff> & Record<string, unknown>;
  if (b.type !== 'fixed' && b.type !== 'exponential') return 'type must be "fixed" or "exponential"';
  const inRange = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= MAX_DELAY_MS;
  if (!inRange(b.delayMs)) return `delayMs must be a number of milliseconds in [0, ${MAX_DELAY_MS}]`;
  if (b.type === 'exponential') {
    if (b.maxDelayMs !== undefined && (!inRange(b.maxDelayMs) || (b.maxDelayMs as number) < (b.delayMs as number)))
      return 'maxDelayMs must be at least delayMs';
    if (b.jitter !== undefined && !(typeof b.jitter === 'number' && b.jitter >= 0 && b.jitter <= 1))
      return 'jitter must be in [0, 1]';
  }
  const known = new Set(['type', 'delayMs', 'maxDelayMs', 'jitter']);
  const unknown = Object.keys(b).find((k) => !known.has(k));
  return unknown ? `has an unknown field "${unknown}"` : null;
}

/** Pure: milliseconds to wait before retry number `retryTimes` (1 = first retry). */
export function backoffDelayMs(backoff: Backoff, retryTimes: number, error: Error): number {
  if (typeof backoff === 'function') return Math.max(0, Number(backoff(retryTimes, error)) || 0);
  if (backoff.type === 'fixed') return backoff.delayMs;
  const cap = backoff.maxDelayMs ?? 3_600_000;
  const raw = Math.min(cap, backoff.delayMs * 2 ** Math.max(0, retryTimes - 1));
  const jitter = backoff.jitter ?? 0.2;
  return Math.max(0, Math.round(raw * (1 - jitter + Math.random() * 2 * jitter)));
}
