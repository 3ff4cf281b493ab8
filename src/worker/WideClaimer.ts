import type { Tracer } from '@opentelemetry/api';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { activeTracer } from '../tracing/activeTracer.ts';
import type { ClaimTokens } from './ClaimTokens.ts';
import { claimAcrossQueues, QUEUES_PER_CLAIM } from './claims/claimAcrossQueues.ts';
import { type ClaimedRow, claimedJob } from './claims/claimedRow.ts';
import { countGroupStarts, isGroupRated } from './claims/countGroupStarts.ts';
import type { QueueGates } from './QueueGates.ts';
import { WideQueues } from './WideQueues.ts';
import type { WorkerEvents } from './WorkerEvents.ts';
import type { ResolvedWorkerOptions } from './workerOptions.ts';

/** What the claim loop does for the wide claimer: claim a limited queue its own way, and run claimed rows. */
export interface WideClaimHost {
  /** Claims up to `want` jobs of a limited queue (claimWithinLimits) and runs them; returns how many. */
  claimLimited(queue: string, want: number, priorities: readonly number[]): Promise<number>;
  /** A claim's round trip, ms (the claim loop's lookahead follows it: DrainRate). */
  claimTook(ms: number): void;
  /** Runs the rows one claim took (`tracer`/`claimedAt`: its tracing, when a tracer is registered). */
  run(rows: readonly ClaimedRow[], tracer: Tracer | undefined, claimedAt: number): Promise<void>;
  /** The rows this worker has a handler for; the others given back (fenced by the claim's lockId), no attempt spent. */
  keepKnown(rows: ClaimedRow[], lockId: string): Promise<ClaimedRow[]>;
}

/**
 * The claim rounds of a worker on many queues or a pattern (WideQueues finds the queues with due
 * work): each claim reads the heads of up to QUEUES_PER_CLAIM of them in one statement and shares
 * itself out across them (claimAcrossQueues), window after window in turn, until the free slots
 * are filled or the list is passed through. A limited queue is claimed on its own
 * (claimWithinLimits); a paused one is passed over until its block ends (QueueGates).
 */
export class WideClaimer {
  readonly #queues: WideQueues;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly options: ResolvedWorkerOptions,
    private readonly tokens: ClaimTokens,
    private readonly gates: QueueGates,
    private readonly report: WorkerEvents,
    private readonly host: WideClaimHost,
  ) {
    this.#queues = new WideQueues(runtime.workerDb, runtime.tables, options.queues, options.pollIntervalMs);
  }

  /** A job may have been enqueued: the next round scans first. */
  ring(): void {
    this.#queues.ring();
  }

  /** One round for up to `free` jobs. Returns [requested, claimed]. */
  async round(free: number): Promise<[number, number]> {
    const { claimBatchSize, headSize } = this.options;
    const { workerDb: db, tables } = this.runtime;
    await this.#queues.beginRound();
    let requested = 0;
    let claimed = 0;
    while (claimed < free) {
      const want = Math.min(free - claimed, claimBatchSize);
      // As many queues as jobs wanted, at most QUEUES_PER_CLAIM: each queue's head costs the claim
      // a branch of its read, and a few free slots need not read fifty heads.
      const window = this.#queues.next(Math.min(QUEUES_PER_CLAIM, want), (q) => this.gates.blockedForMs(q) === 0);
      if (window.length === 0) break;
      const plain = window.filter((q) => !this.gates.limited(q.queue));
      requested += want;
      const lockId = this.tokens.next();
      const tracer = activeTracer();
      const claimedAt = tracer ? Date.now() : 0;
      const started = performance.now();
      const claim = await claimAcrossQueues(db, tables, { heads: plain, want, lockId, headSize });
      this.host.claimTook(performance.now() - started);
      this.#queues.drained(claim.drained);
      // Jobs of rated groups count their starts before any of them runs; others pay nothing here.
      const claimedRows = claim.rows.length > 0 ? await this.host.keepKnown(claim.rows, lockId) : claim.rows;
      const rows = claimedRows.some(isGroupRated)
        ? await countGroupStarts(db, tables, lockId, claimedRows)
        : claimedRows;
      for (const q of plain) {
        const mine = rows.filter((r) => r.queue === q.queue);
        this.report.claimRound(q.queue, mine.map(claimedJob));
        if (mine.length > 0) this.report.claimed(lockId, q.queue, mine.length, this.options.claim);
      }
      claimed += rows.length;
      if (rows.length > 0) await this.host.run(rows, tracer, claimedAt);
      // A queue whose row refused turns limited (or paused) here: claimed its own way from now on.
      for (const queue of claim.refused) await this.gates.refused(queue);
      for (const q of window) {
        if (claimed >= free) break;
        if (this.gates.limited(q.queue))
          claimed += await this.host.claimLimited(q.queue, Math.min(free - claimed, claimBatchSize), q.priorities);
      }
    }
    return [requested, claimed];
  }

  /**
   * The wait after an empty round, from the round's scan (no further read): until the earliest
   * due time among its queues, or a block's end; `dueAlready` when one has a due job.
   */
  idleDelay(pollDelayMs: number): { delayMs: number; dueAlready: boolean } {
    let delayMs = pollDelayMs;
    let dueAlready = false;
    for (const q of this.#queues.scanned) {
      const blockedMs = this.gates.blockedForMs(q.queue);
      if (blockedMs > 0) delayMs = Math.min(delayMs, blockedMs);
      else if (q.dueInMs > 0) delayMs = Math.min(delayMs, q.dueInMs + 1);
      else dueAlready = true;
    }
    return { delayMs, dueAlready };
  }
}
