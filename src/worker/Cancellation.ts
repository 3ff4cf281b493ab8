/**
 * A running job's abort switch, whose AbortSignal is made only when something reads it: most
 * handlers never look at ctx.signal, and an AbortController per job is a measurable share of a
 * worker's CPU at tens of thousands of jobs a second. An abort before the signal exists is kept;
 * the signal is then born aborted, with the same reason.
 */
export class Cancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Idempotent: the first reason stands. */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
