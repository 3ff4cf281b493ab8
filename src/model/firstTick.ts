import { nextTick, type TickRule } from './scheduleTicks.ts';

/** The bounds a schedule's ticks live in. */
export interface TickBounds {
  readonly startAt: Date | null;
  readonly endAt: Date | null;
  readonly limit: number | null;
  readonly runs: number;
}

/**
 * Pure: the first tick strictly after `afterMs` (and at or after startAt), or null when the
 * schedule is over: the tick would be past endAt, or the limit is reached.
 */
export function firstTickAfter(rule: TickRule, afterMs: number, bounds: TickBounds): number | null {
  if (bounds.limit !== null && bounds.runs >= bounds.limit) return null;
  const from = bounds.startAt === null ? afterMs : Math.max(afterMs, bounds.startAt.getTime() - 1);
  const tick = nextTick(rule, from);
  if (tick === null) return null;
  if (bounds.endAt !== null && tick > bounds.endAt.getTime()) return null;
  return tick;
}
