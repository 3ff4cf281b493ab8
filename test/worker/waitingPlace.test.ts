import { describe, expect, it } from 'vitest';
import { waitingPlace } from '../../src/worker/waitingPlace.ts';

const line = (...jobs: [string, number][]) => jobs.map(([queue, priority]) => ({ job: { queue, priority } }));

describe('where a claimed job waits for a slot', () => {
  it('at the end of the line when nothing waiting is worse: claims arrive in priority order', () => {
    expect(waitingPlace([], { queue: 'a', priority: 5 })).toBe(0);
    expect(waitingPlace(line(['a', 0], ['a', 5], ['a', 5]), { queue: 'a', priority: 5 })).toBe(3);
    expect(waitingPlace(line(['a', 0], ['a', 5]), { queue: 'a', priority: 9 })).toBe(2);
  });

  it('a better job of the same queue goes before the worse ones at the end, after its own priority', () => {
    expect(waitingPlace(line(['a', 5], ['a', 5], ['a', 5]), { queue: 'a', priority: 0 })).toBe(0);
    expect(waitingPlace(line(['a', 0], ['a', 0], ['a', 5], ['a', 5]), { queue: 'a', priority: 0 })).toBe(2);
    expect(waitingPlace(line(['a', 0], ['a', 3], ['a', 5]), { queue: 'a', priority: 3 })).toBe(2);
  });

  it('never passes another queue’s jobs: priorities order one queue, not the worker', () => {
    expect(waitingPlace(line(['a', 5], ['b', 5], ['a', 5]), { queue: 'a', priority: 0 })).toBe(2);
    expect(waitingPlace(line(['a', 5], ['a', 5], ['b', 9]), { queue: 'a', priority: 0 })).toBe(3);
  });
});
