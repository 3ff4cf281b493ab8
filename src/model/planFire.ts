import { firstTickAfter, type TickBounds } from './firstTick.ts';
import type { MissedTicks } from './scheduleSpec.ts';
import { nextTick, type TickRule } from './scheduleTicks.ts';

/** With missed: 'skip', a tick this close to now is on time (maintenance runs every few seconds). */
export const ON_TIME_MS = 60_000;
/** With missed: 'all', at most this many ticks of one schedule fire in one pass; the rest in the passes after. */
export const MAX_TICKS_PER_PASS = 1_000;
/** Ticks one search steps through at most (a latest-tick search over a window of an every-second cron). */
const MAX_STEPS = 100_000;
/** The windows, before now, in which the latest missed tick is looked for, smallest first. */
const WINDOWS_MS = [60_000, 3_600_000, 86_400_000, 32 * 86_400_000, 400 * 86_400_000, 8 * 366 * 86_400_000];

export interface DueSchedule extends TickBounds {
  readonly rule: TickRule;
  /** next_run_at: the first tick not fired yet, at or before now. */
  readonly nextMs: number;
  /** last_tick_at: no tick at or before it fires again. */
  readonly lastTickMs: number | null;
  readonly missed: MissedTicks;
}

export interface FirePlan {
  /** The ticks to enqueue a job for, in order. */
  readonly ticks: readonly number[];
  /** The new next_run_at (null: over). */
  readonly next: number | null;
}

/**
 * Pure: what one due schedule fires at `nowMs` (the database's clock) and where it goes next.
 * 'all': every tick from next_run_at to now (up to MAX_TICKS_PER_PASS; next_run_at then stays in
 * the past and the next pass goes on). 'once': the latest tick at or before now. 'skip': that
 * tick only if it is within ON_TIME_MS of now. endAt and limit cut the ticks; next is the first
 * tick after now (after the last fired one for 'all'), or null once the schedule is over.
 */
export function planFire(due: DueSchedule, nowMs: number): FirePlan {
  const remaining = due.limit === null ? Number.POSITIVE_INFINITY : Math.max(0, due.limit - due.runs);
  const upper = due.endAt === null ? nowMs : Math.min(nowMs, due.endAt.getTime());
  const floor = Math.max(due.nextMs - 1, due.lastTickMs ?? Number.NEGATIVE_INFINITY);
  const ticks: number[] = [];
  if (due.missed === 'all') {
    let t: number | null = due.nextMs;
    const cap = Math.min(remaining, MAX_TICKS_PER_PASS);
    while (t !== null && t <= upper && ticks.length < cap) {
      if (t > floor) ticks.push(t);
      t = nextTick(due.rule, t);
    }
    const after = ticks.length === 0 ? nowMs : Math.min(ticks[ticks.length - 1] as number, nowMs);
    const next =
      ticks.length === cap && t !== null && t <= upper
        ? t
        : firstTickAfter(due.rule, after, runsPlus(due, ticks.length));
    return { ticks, next: ticks.length >= remaining ? null : next };
  }
  // next_run_at is a tick by its making (the first not fired): it counts even off the rule's grid.
  const latest =
    remaining > 0
      ? (latestTick(due.rule, upper, floor) ?? (due.nextMs <= upper && due.nextMs > floor ? due.nextMs : null))
      : null;
  if (latest !== null && (due.missed === 'once' || nowMs - latest <= ON_TIME_MS)) ticks.push(latest);
  return { ticks, next: firstTickAfter(due.rule, Math.max(nowMs, latest ?? nowMs), runsPlus(due, ticks.length)) };
}

function runsPlus(due: DueSchedule, fired: number): TickBounds {
  return { startAt: due.startAt, endAt: due.endAt, limit: due.limit, runs: due.runs + fired };
}

/** Pure: the latest tick in (lowerMs, upperMs], or null. */
export function latestTick(rule: TickRule, upperMs: number, lowerMs: number): number | null {
  if (upperMs <= lowerMs) return null;
  if (rule.kind === 'every') {
    if (upperMs < rule.anchorMs) return null;
    const t = rule.anchorMs + Math.floor((upperMs - rule.anchorMs) / rule.everyMs) * rule.everyMs;
    return t > lowerMs ? t : null;
  }
  for (const window of WINDOWS_MS) {
    const from = Math.max(lowerMs, upperMs - window);
    let t = nextTick(rule, from);
    if (t === null || t > upperMs) {
      if (from === lowerMs) return null;
      continue;
    }
    for (let step = 0; step < MAX_STEPS; step++) {
      const n = nextTick(rule, t);
      if (n === null || n > upperMs) break;
      t = n;
    }
    return t;
  }
  return null;
}
