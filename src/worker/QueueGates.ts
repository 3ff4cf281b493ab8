import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { readQueueGate } from '../queues/readQueueGate.ts';
import type { LimitedClaim } from './claims/claimWithinLimits.ts';

/**
 * The most queues whose gate a worker keeps (a worker on a pattern may meet ever new queues). Past
 * it, the gates that hold nothing (no limit, no block, read longer than maxAgeMs ago) go, then the
 * oldest, down to three quarters of it: a queue whose gate went is claimed the ordinary way, and a
 * refusal reads its row again.
 */
export const MAX_GATES = 10_000;

interface GateState {
  /** Claims of this queue go through claimWithinLimits. */
  limited: boolean;
  /** When the queue's row was last read (performance.now()); 0: never. */
  readAt: number;
  /** No claim of this queue before then (performance.now()): a limit or a pause holds it back. */
  blockedUntil: number;
  /** The block is a cap's: it ends early when one of this worker's jobs ends. */
  capBlocked: boolean;
}

/**
 * What one worker knows of its queues' limits and pauses, so that a queue without a limit is
 * claimed exactly as ever: no read of its row beyond the claim statement's own check (queueGate),
 * which refuses a limited or paused queue. A refused claim (due jobs, none claimed) re-reads the
 * row, at most once per `maxAgeMs` and queue, and a limited queue's claims then go through
 * claimWithinLimits, whose every run reads the row anyway (a limit removed at run time takes effect
 * at the next claim; one added, within about `maxAgeMs`).
 *
 * A queue held back is not claimed until its block ends, with no spin: a rate until the window's
 * end, a pause-until until its end, a cap or an operator's pause for a jittered `maxAgeMs` (a cap
 * also until one of this worker's own jobs ends, which may free a slot).
 */
export class QueueGates {
  readonly #state = new Map<string, GateState>();

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    private readonly maxAgeMs: number,
  ) {}

  /** Queues whose gate is kept (at most MAX_GATES). */
  get size(): number {
    return this.#state.size;
  }

  limited(queue: string): boolean {
    return this.#state.get(queue)?.limited ?? false;
  }

  /** How long the queue is held back yet (ms), or 0. */
  blockedForMs(queue: string): number {
    const state = this.#state.get(queue);
    return state ? Math.max(0, state.blockedUntil - performance.now()) : 0;
  }

  /**
   * An ordinary claim found due jobs and got none: re-reads the queue's row unless it was read
   * within maxAgeMs. True when the queue turned out limited (claim it the limited way now).
   */
  async refused(queue: string): Promise<boolean> {
    const state = this.#of(queue);
    const now = performance.now();
    if (state.readAt !== 0 && now - state.readAt < this.maxAgeMs) return false;
    const gate = await readQueueGate(this.db, this.tables, queue);
    state.readAt = performance.now();
    state.limited = gate.limited;
    if (gate.pausedForMs > 0) this.#block(state, gate.pausedForMs, false);
    else if (gate.paused) this.#block(state, jittered(this.maxAgeMs), false);
    return gate.limited && !gate.paused && gate.pausedForMs === 0;
  }

  /** Keeps what a limited claim read of the queue's row, and blocks the queue if a limit held the claim back. */
  limitedClaim(queue: string, claim: LimitedClaim): void {
    const state = this.#of(queue);
    state.readAt = performance.now();
    state.limited = claim.limited;
    if (claim.blocked === null || claim.rows.length > 0) return;
    if (claim.waitMs !== null) this.#block(state, claim.waitMs + Math.random() * Math.min(50, claim.waitMs / 4), false);
    else this.#block(state, jittered(this.maxAgeMs), claim.blocked === 'concurrency');
  }

  /** One of this worker's jobs ended: a capped queue may have a free slot again. */
  slotFreed(): void {
    for (const state of this.#state.values()) {
      if (!state.capBlocked) continue;
      state.blockedUntil = 0;
      state.capBlocked = false;
    }
  }

  #block(state: GateState, ms: number, cap: boolean): void {
    state.blockedUntil = performance.now() + ms;
    state.capBlocked = cap;
  }

  #of(queue: string): GateState {
    let state = this.#state.get(queue);
    if (!state) {
      if (this.#state.size >= MAX_GATES) this.#prune();
      state = { limited: false, readAt: 0, blockedUntil: 0, capBlocked: false };
      this.#state.set(queue, state);
    }
    return state;
  }

  /** Down to three quarters of MAX_GATES: first the gates that hold nothing, then the oldest. */
  #prune(): void {
    const now = performance.now();
    const keep = Math.floor((MAX_GATES * 3) / 4);
    for (const [queue, s] of this.#state)
      if (!s.limited && s.blockedUntil <= now && now - s.readAt >= this.maxAgeMs) this.#state.delete(queue);
    for (const queue of this.#state.keys()) {
      if (this.#state.size <= keep) break;
      this.#state.delete(queue);
    }
  }
}

/** ±25 % so that the workers held back by one queue do not come back in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.75 + Math.random() * 0.5));
}
