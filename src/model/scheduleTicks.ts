import cron from 'node-cron';
import { instantOf, offsetAt, wallAt } from './zonedTime.ts';

/**
 * Pure: the ticks of a run-time schedule. A cron schedule ticks at each wall-clock time its
 * expression names in its zone (UTC when none), once per wall time: a wall time the clocks skip
 * on a spring-forward day fires once, at the same distance past the gap (02:30 → 03:30), and a
 * wall time that happens twice on a fall-back day fires once, the first time. An `every`
 * schedule ticks every `everyMs` from its anchor (startAt, else when it was created).
 */
export type TickRule =
  | { readonly kind: 'cron'; readonly fields: CronFields; readonly tz: string }
  | { readonly kind: 'every'; readonly everyMs: number; readonly anchorMs: number };

export interface CronFields {
  readonly second: readonly number[];
  readonly minute: readonly number[];
  readonly hour: readonly number[];
  readonly dayOfMonth: readonly number[];
  readonly month: readonly number[];
  readonly dayOfWeek: readonly number[];
}

/** How far ahead a cron expression is searched for its next tick (a 29 February on a Monday is rarer). */
const SEARCH_DAYS = 366 * 8;
const DAY_MS = 86_400_000;

/** Why `expression` cannot be a run-time schedule's cron, or its fields. */
export function cronFieldsOf(expression: string): CronFields | string {
  if (!cron.validate(expression)) return `is not a cron expression: ${JSON.stringify(expression)}`;
  const parsed = cron.parse(expression);
  const numbers = (values: readonly (number | string)[]) => values.every((v) => typeof v === 'number');
  if (!numbers(parsed.dayOfMonth) || !numbers(parsed.dayOfWeek))
    return `uses a day form run-time schedules do not take (L, #): ${JSON.stringify(expression)}`;
  return {
    second: [...parsed.second].sort((a, b) => a - b),
    minute: [...parsed.minute].sort((a, b) => a - b),
    hour: [...parsed.hour].sort((a, b) => a - b),
    dayOfMonth: parsed.dayOfMonth as number[],
    month: parsed.month,
    dayOfWeek: (parsed.dayOfWeek as number[]).map((d) => d % 7),
  };
}

/** The first tick strictly after `afterMs`, or null when none within eight years. */
export function nextTick(rule: TickRule, afterMs: number): number | null {
  if (rule.kind === 'every') {
    if (afterMs < rule.anchorMs) return rule.anchorMs;
    const n = Math.floor((afterMs - rule.anchorMs) / rule.everyMs) + 1;
    return rule.anchorMs + n * rule.everyMs;
  }
  return nextCronTick(rule.fields, rule.tz, afterMs);
}

function nextCronTick(f: CronFields, tz: string, afterMs: number): number | null {
  // Near a change of offset, wall times a few hours before the wall time of `afterMs` can still
  // fall after it (a fall-back day repeats an hour): the search then starts there and keeps only
  // instants past afterMs. Where the offset holds from a day before to two days after, wall time
  // and instant differ by it for the day ahead, and the search starts at afterMs's wall time.
  const offset = offsetAt(afterMs, tz);
  const stable = offsetAt(afterMs - DAY_MS, tz) === offset && offsetAt(afterMs + 2 * DAY_MS, tz) === offset;
  const wallAfter = wallAt(afterMs, tz);
  const lowest = stable ? wallAfter : wallAfter - 3 * 3_600_000;
  const stableUntil = stable ? wallAfter + DAY_MS : Number.NEGATIVE_INFINITY;
  const firstDay = Math.floor(lowest / DAY_MS) * DAY_MS;
  const months = new Set(f.month);
  const doms = new Set(f.dayOfMonth);
  const dows = new Set(f.dayOfWeek);
  for (let d = 0; d < SEARCH_DAYS; d++) {
    const day = firstDay + d * DAY_MS;
    const date = new Date(day);
    if (!months.has(date.getUTCMonth() + 1) || !doms.has(date.getUTCDate()) || !dows.has(date.getUTCDay())) continue;
    for (const h of f.hour) {
      const hourStart = day + h * 3_600_000;
      if (hourStart + 3_600_000 <= lowest) continue;
      for (const m of f.minute) {
        const minuteStart = hourStart + m * 60_000;
        if (minuteStart + 60_000 <= lowest) continue;
        for (const s of f.second) {
          const wall = minuteStart + s * 1000;
          if (wall < lowest) continue;
          const instant = wall <= stableUntil ? wall - offset : instantOf(wall, tz);
          if (instant > afterMs) return instant;
        }
      }
    }
  }
  return null;
}
