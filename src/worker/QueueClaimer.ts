import { nextDueInMs } from '../queues/nextDueInMs.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { ClaimTokens } from './ClaimTokens.ts';
import type { ConcurrencyLimit } from './ConcurrencyLimit.ts';
import { type ClaimedRow, claimedJob } from './claims/claimedRow.ts';
import { claimRandomHead } from './claims/claimRandomHead.ts';
import { claimSkipLocked } from './claims/claimSkipLocked.ts';
import { claimWithinLimits } from './claims/claimWithinLimits.ts';
import { countGroupStarts, isGroupRated } from './claims/countGroupStarts.ts';
import type { PayloadPrefetch } from './PayloadPrefetch.ts';
import type { QueueGates } from './QueueGates.ts';
import { QueuePriorities, samePriorities } from './QueuePriorities.ts';
import type { WorkerEvents } from './WorkerEvents.ts';
import { type UnknownJobsDeps, withoutUnknownJobs } from './withoutUnknownJobs.ts';
import type { ResolvedWorkerOptions } from './workerOptions.ts';

/** What a queue's claim reads of the worker, and tells it. */
export interface QueueClaimHost {
  /** Jobs the worker holds: in its slots, and claimed ahead waiting for one. */
  inFlight(): number;
  /** A claim's round trip, ms (the claim loop's lookahead follows it: DrainRate). */
  claimTook(ms: number): void;
}

/**
 * The claim of one queue, its own way: the ordinary claim (random-head or skip-locked) for a queue
 * without a limit, claimWithinLimits for a limited one (free slots only), with the queue's
 * priority set (QueuePriorities), its gate (QueueGates), and the jobs of names the worker has no
 * handler for given back. A worker on up to 8 names claims each this way in turn; a wide worker
 * (WideClaimer), its limited queues.
 */
export class QueueClaimer {
  readonly #priorities: QueuePriorities;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly options: ResolvedWorkerOptions,
    private readonly tokens: ClaimTokens,
    private readonly limit: ConcurrencyLimit,
    private readonly gates: QueueGates,
    private readonly prefetch: PayloadPrefetch,
    private readonly unknownJobs: UnknownJobsDeps,
    private readonly report: WorkerEvents,
    private readonly host: QueueClaimHost,
  ) {
    this.#priorities = new QueuePriorities(runtime.workerDb, runtime.tables, options.pollIntervalMs);
  }

  /**
   * The wait after an empty round over the named queues: the poll delay, or less if a free job of
   * one of them falls due sooner (its run_at on the DB clock, one index seek per priority of the
   * queue); `dueAlready` when a free job is due now, though the round did not claim it.
   */
  async idleDelay(pollDelayMs: number): Promise<{ delayMs: number; dueAlready: boolean }> {
    let delayMs = pollDelayMs;
    let dueAlready = false;
    try {
      for (const queue of this.options.queues) {
        // A queue held back by its limit or a pause: its due jobs cannot start before the block ends.
        const blockedMs = this.gates.blockedForMs(queue);
        if (blockedMs > 0) {
          delayMs = Math.min(delayMs, blockedMs);
          continue;
        }
        const priorities = await this.#priorities.get(queue);
        if (priorities.length === 0) continue;
        const dueInMs = await nextDueInMs(this.runtime.workerDb, this.runtime.tables, queue, priorities);
        if (dueInMs !== null && dueInMs > 0) delayMs = Math.min(delayMs, dueInMs + 1);
        else if (dueInMs !== null) dueAlready = true;
      }
    } catch (error) {
      this.report.error(error, 'reading the next due time');
    }
    return { delayMs, dueAlready };
  }

  /**
   * Claims up to `want` jobs of one queue. A claim that found nothing refreshes the priority set
   * and tries once more (a partial claim does not: under contention that would re-read the set on
   * almost every claim; the set is re-read every pollIntervalMs anyway).
   */
  async claim(queue: string, want: number): Promise<ClaimedRow[]> {
    if (this.gates.blockedForMs(queue) > 0) return [];
    const cached = await this.#priorities.get(queue);
    const rows = await this.claimWith(queue, want, cached);
    if (rows.length === 0 && this.gates.blockedForMs(queue) === 0) {
      const fresh = await this.#priorities.refresh(queue);
      if (!samePriorities(fresh, cached)) rows.push(...(await this.claimWith(queue, want - rows.length, fresh)));
    }
    return rows;
  }

  async claimWith(queue: string, want: number, priorities: readonly number[]): Promise<ClaimedRow[]> {
    if (priorities.length === 0) return [];
    const { workerDb: db, tables } = this.runtime;
    const lockId = this.tokens.next();
    const started = performance.now();
    const refused = { value: false };
    let rows: ClaimedRow[];
    if (this.gates.limited(queue)) {
      // No lookahead: the cap counts claimed rows, and a job claimed ahead would hold a place of it idle.
      const slots = Math.min(want, this.limit.current - this.host.inFlight());
      if (slots <= 0) return [];
      const claim = await claimWithinLimits(db, tables, { queue, priorities, want: slots, lockId });
      this.gates.limitedClaim(queue, claim);
      rows = claim.rows;
    } else {
      rows =
        this.options.claim === 'skip-locked'
          ? await claimSkipLocked(db, tables, { queue, priorities, want, lockId, refused })
          : await claimRandomHead(db, tables, {
              queue,
              priorities,
              want,
              lockId,
              refused,
              headSize: this.options.headSize,
            });
    }
    // Jobs of names this worker has no handler for go back at once, uncounted.
    if (rows.length > 0) rows = await withoutUnknownJobs(this.unknownJobs, queue, lockId, rows);
    // Jobs of rated groups count their starts before any of them runs; others pay nothing here.
    if (rows.some(isGroupRated)) rows = await countGroupStarts(db, tables, lockId, rows);
    this.host.claimTook(performance.now() - started);
    this.report.claimRound(queue, rows.map(claimedJob));
    this.prefetch.afterClaim({ queue, priorities }, rows, want);
    if (rows.length > 0) this.report.claimed(lockId, queue, rows.length, this.options.claim);
    // Refused by the queue's row: if it turned limited, claim the limited way at once.
    if (refused.value && (await this.gates.refused(queue))) return this.claimWith(queue, want, priorities);
    return rows;
  }
}
