import { describe, expect, it } from 'vitest';
import { latestTick, planFire } from '../../src/model/planFire.ts';
import { cronFieldsOf, nextTick, type TickRule } from '../../src/model/scheduleTicks.ts';
import { instantOf } from '../../src/model/zonedTime.ts';

/** docs/schedules.md "Time zones and DST": once per wall-clock time, in the schedule's zone. */
function cronRule(expression: string, tz: string): TickRule {
  const fields = cronFieldsOf(expression);
  if (typeof fields === 'string') throw new Error(fields);
  return { kind: 'cron', fields, tz };
}

function ticks(rule: TickRule, from: string, to: string): string[] {
  const out: string[] = [];
  let t: number | null = Date.parse(from);
  for (;;) {
    t = nextTick(rule, t);
    if (t === null || t > Date.parse(to)) return out;
    out.push(new Date(t).toISOString());
  }
}

describe('schedule ticks', () => {
  it('a 02:30 Europe/Berlin schedule runs once on the spring-forward day, at 03:30 CEST', () => {
    // 29 March 2026: 02:00 CET becomes 03:00 CEST; 02:30 does not happen that day.
    expect(ticks(cronRule('30 2 * * *', 'Europe/Berlin'), '2026-03-27T12:00:00Z', '2026-03-31T12:00:00Z')).toEqual([
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:30:00.000Z', // 03:30 CEST: moved past the gap
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('a 02:30 Europe/Berlin schedule runs once on the fall-back day, the first time 02:30 happens', () => {
    // 25 October 2026: 03:00 CEST becomes 02:00 CET; 02:30 happens twice.
    expect(ticks(cronRule('30 2 * * *', 'Europe/Berlin'), '2026-10-23T12:00:00Z', '2026-10-26T12:00:00Z')).toEqual([
      '2026-10-24T00:30:00.000Z',
      '2026-10-25T00:30:00.000Z', // 02:30 CEST; not again at 02:30 CET (01:30Z)
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('an hourly schedule fires once per wall-clock hour across both changes', () => {
    const rule = cronRule('0 * * * *', 'Europe/Berlin');
    const spring = ticks(rule, '2026-03-28T23:30:00Z', '2026-03-29T02:00:00Z');
    // 02:00 CET is skipped and moved to 03:00 CEST, the same instant as 03:00 CEST: one tick.
    expect(spring).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T02:00:00.000Z']);
    const fall = ticks(rule, '2026-10-24T23:30:00Z', '2026-10-25T03:00:00Z');
    // Wall 02:00 happens at 00:00Z and again at 01:00Z: fired the first time only.
    expect(fall).toEqual(['2026-10-25T00:00:00.000Z', '2026-10-25T02:00:00.000Z', '2026-10-25T03:00:00.000Z']);
    // From inside the repeated hour, the next tick is 03:00 CET, not a second 02:xx.
    expect(new Date(nextTick(rule, Date.parse('2026-10-25T01:10:00Z'))!).toISOString()).toBe(
      '2026-10-25T02:00:00.000Z',
    );
  });

  it('reads the seconds field, UTC by default, and every from its anchor', () => {
    expect(ticks(cronRule('*/20 * * * * *', 'UTC'), '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z')).toEqual([
      '2026-01-01T00:00:20.000Z',
      '2026-01-01T00:00:40.000Z',
      '2026-01-01T00:01:00.000Z',
    ]);
    const every: TickRule = { kind: 'every', everyMs: 90_000, anchorMs: Date.parse('2026-01-01T00:00:00Z') };
    expect(ticks(every, '2025-12-31T23:59:00Z', '2026-01-01T00:03:00Z')).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:01:30.000Z',
      '2026-01-01T00:03:00.000Z',
    ]);
  });

  it('instantOf: a skipped wall time moves later by the gap, a repeated one is the first', () => {
    expect(new Date(instantOf(Date.UTC(2026, 2, 29, 2, 30), 'Europe/Berlin')).toISOString()).toBe(
      '2026-03-29T01:30:00.000Z',
    );
    expect(new Date(instantOf(Date.UTC(2026, 9, 25, 2, 30), 'Europe/Berlin')).toISOString()).toBe(
      '2026-10-25T00:30:00.000Z',
    );
    expect(new Date(instantOf(Date.UTC(2026, 6, 1, 12), 'America/New_York')).toISOString()).toBe(
      '2026-07-01T16:00:00.000Z',
    );
  });

  it('latestTick and planFire stay bounded for an every-second cron missed for a year', () => {
    const rule = cronRule('* * * * * *', 'UTC');
    const now = Date.parse('2026-06-01T00:00:00.500Z');
    expect(new Date(latestTick(rule, now, now - 365 * 86_400_000)!).toISOString()).toBe('2026-06-01T00:00:00.000Z');
    const base = {
      rule,
      nextMs: Date.parse('2025-06-01T00:00:00Z'),
      lastTickMs: null,
      startAt: null,
      endAt: null,
      limit: null,
      runs: 0,
    };
    expect(planFire({ ...base, missed: 'once' }, now).ticks).toEqual([Date.parse('2026-06-01T00:00:00Z')]);
    const all = planFire({ ...base, missed: 'all' }, now);
    expect(all.ticks).toHaveLength(1_000);
    // next_run_at stays in the past: the next pass goes on from there.
    expect(all.next).toBe(base.nextMs + 1_000_000);
  });

  it('refuses day forms it cannot step through', () => {
    expect(cronFieldsOf('0 0 L * *')).toMatch(/day form/);
    expect(cronFieldsOf('not cron')).toMatch(/not a cron expression/);
  });
});
