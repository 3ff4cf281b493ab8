import { describe, expect, it } from 'vitest';
import { StepBudget } from '../../src/maintenance/StepBudget.ts';

/** A walking task stops before the step that would end past its budget, not after it. */
describe('StepBudget', () => {
  it('stops when another step as long as the longest so far would cross the deadline', () => {
    let now = 1_000;
    const budget = new StepBudget(() => now, 1_000);
    const steps: boolean[] = [];
    for (const ms of [100, 300, 100, 250]) {
      now += ms;
      steps.push(budget.stepped());
    }
    // After 100, 400 (longest 300: 700 < 1,000), 500 (800 < 1,000) and 750 ms (1,050 ≥ 1,000): stop.
    expect(steps).toEqual([false, false, false, true]);
    expect(now - 1_000).toBeLessThanOrEqual(1_000);
  });

  it('lets a first step longer than the budget end it, and no second', () => {
    let now = 0;
    const budget = new StepBudget(() => now, 50);
    now += 80;
    expect(budget.stepped()).toBe(true);
  });
});
