import type { MonotonicClock } from '../../src/maintenance/UnchangedSince.ts';

/**
 * A monotonic clock a test moves by hand (the maintenance process's `clock` option): liveness is
 * judged by what changed between two passes at least a timeout apart on this clock, so a test
 * runs a pass, advances the clock, and runs another — no sleeping.
 */
export interface FakeClock {
  readonly now: MonotonicClock;
  advance(ms: number): void;
}

export function fakeClock(start = 1_000_000): FakeClock {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}
