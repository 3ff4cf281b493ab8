/**
 * Pure: wall-clock time in an IANA zone, to and from instants, with Intl only (no dependency).
 * A wall time is milliseconds as if the zone were UTC (Date.UTC of its fields).
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The wall time at `instant` (ms) in `tz`, to the second. */
export function wallAt(instant: number, tz: string): number {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(tz).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const { year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0 } = parts;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/**
 * Offsets by zone and quarter hour. Every zone's offsets (since 1900) are whole quarter hours and
 * change at a wall-clock quarter hour, so at a UTC quarter hour: one offset holds through each
 * UTC quarter hour, and one Intl call answers it.
 */
const offsets = new Map<string, number>();
const QUARTER_MS = 900_000;
const MAX_CACHED = 50_000;

/** The zone's offset (wall − instant, ms) at `instant`. */
export function offsetAt(instant: number, tz: string): number {
  const quarter = Math.floor(instant / QUARTER_MS) * QUARTER_MS;
  const key = `${tz}|${quarter}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    offset = wallAt(quarter, tz) - quarter;
    if (offsets.size >= MAX_CACHED) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

const DAY_MS = 86_400_000;

/**
 * The instant of wall time `wall` in `tz`. A wall time the clocks skip (spring forward) is moved
 * later by the gap (02:30 on a day the clocks go from 02:00 to 03:00 is 03:30, as Temporal's
 * 'compatible' does); a wall time that happens twice (fall back) is the first of the two.
 */
export function instantOf(wall: number, tz: string): number {
  const before = offsetAt(wall - DAY_MS, tz);
  const after = offsetAt(wall + DAY_MS, tz);
  const early = wall - before;
  const late = wall - after;
  const fits = (i: number) => offsetAt(i, tz) === wall - i;
  const candidates = [early, late].filter(fits);
  if (candidates.length > 0) return Math.min(...candidates);
  return early;
}

/** Whether `tz` names an IANA zone this runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    formatterFor(tz);
    return true;
  } catch {
    return false;
  }
}
