/**
 * A walking task's time within one run: after each step it asks whether the next, as long as the
 * longest so far, would end past the deadline, and stops before it rather than after. So a run
 * ends within its budget instead of one step past it (a pass of several tasks adds up to its own),
 * unless its first step alone takes longer: that one is always taken, or a task whose step costs
 * more than its budget would never move on.
 */
export class StepBudget {
  readonly #clock: () => number;
  readonly #deadline: number;
  #stepStarted: number;
  #longest = 0;

  constructor(clock: () => number, ms: number) {
    this.#clock = clock;
    this.#stepStarted = clock();
    this.#deadline = this.#stepStarted + ms;
  }

  /** A step just ended: true when another as long as the longest so far would cross the deadline. */
  stepped(): boolean {
    const now = this.#clock();
    this.#longest = Math.max(this.#longest, now - this.#stepStarted);
    this.#stepStarted = now;
    return now + this.#longest >= this.#deadline;
  }
}
