import type { LoadReading } from './hostLoad.ts';

export interface LoadPolicy {
  /** Whether the host's load is sampled at all: `false` keeps the worker at its `concurrency` whatever the load. @defaultValue true */
  readonly enabled: boolean;
  /** Above this CPU busy fraction the worker runs fewer jobs (1: never for the CPU). @defaultValue 1 */
  readonly maxCpu: number;
  /** Below this free-memory fraction the worker runs fewer jobs. @defaultValue 0.05 */
  readonly minFreeMem: number;
}

/**
 * How many jobs a worker runs at once right now: the configured concurrency, lowered under load.
 * The heartbeat adjusts it from load readings; the claim loop reads it and is woken on a change.
 */
export class ConcurrencyLimit {
  #current: number;

  constructor(
    readonly max: number,
    private readonly policy: LoadPolicy,
    private readonly onChange: () => void,
  ) {
    this.#current = max;
  }

  get current(): number {
    return this.#current;
  }

  /** Applies one load reading; returns the change, or null when the limit stays. */
  adjust(reading: LoadReading): { from: number; to: number } | null {
    const from = this.#current;
    const to = nextConcurrencyLimit(from, this.max, reading, this.policy);
    if (to === from) return null;
    this.#current = to;
    this.onChange();
    return { from, to };
  }
}

/**
 * Pure: the next limit on jobs at once. Overloaded (CPU above maxCpu or free memory below
 * minFreeMem): halve, down to 1. Room to spare: grow by a tenth of the configured concurrency (at
 * least 1), up to it. Additive increase, multiplicative decrease, as TCP does, so a fleet backs
 * off fast and recovers without oscillating.
 */
export function nextConcurrencyLimit(
  current: number,
  concurrency: number,
  reading: LoadReading,
  policy: Pick<LoadPolicy, 'maxCpu' | 'minFreeMem'>,
): number {
  const overloaded = reading.cpu > policy.maxCpu || reading.freeMem < policy.minFreeMem;
  if (overloaded) return Math.max(1, Math.floor(current / 2));
  return Math.min(concurrency, current + Math.max(1, Math.ceil(concurrency / 10)));
}
