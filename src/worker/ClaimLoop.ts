import type { Link, Tracer } from '@opentelemetry/api';
import { isTransientConflict } from '../db/mysqlErrors.ts';
import type { JobRow } from '../model/job.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { activeTracer } from '../tracing/activeTracer.ts';
import { readTraceLinks } from '../tracing/readTraceContexts.ts';
import type { ClaimTokens } from './ClaimTokens.ts';
import type { CompletionBuffer } from './CompletionBuffer.ts';
import type { ConcurrencyLimit } from './ConcurrencyLimit.ts';
import type { ClaimedRow } from './claims/claimedRow.ts';
import { DrainRate } from './DrainRate.ts';
import { PayloadPrefetch } from './PayloadPrefetch.ts';
import { QueueClaimer } from './QueueClaimer.ts';
import { QueueGates } from './QueueGates.ts';
import { WideClaimer } from './WideClaimer.ts';
import { isWide } from './WideQueues.ts';
import type { WorkerEvents } from './WorkerEvents.ts';
import { type UnknownJobsDeps, withoutUnknownJobs } from './withoutUnknownJobs.ts';
import type { ResolvedWorkerOptions } from './workerOptions.ts';

/** What the claim loop reads from and hands to its worker. */
export interface ClaimLoopHost {
  /** True while the worker may claim. */
  claiming(): boolean;
  /** Jobs the worker holds: in its slots, and claimed ahead waiting for one. */
  inFlight(): number;
  /** Jobs the worker has finished in all (the slots' drain rate: DrainRate). */
  processed(): number;
  /** Jobs claimed ahead beyond `keep` may be given back (when they have waited long: the slots slowed). */
  shed(keep: number): void;
  /**
   * Runs one claimed row in a slot; `claimSize`: the rows its claim took in all; `traced`: the
   * claim's tracing, when a tracer is registered.
   */
  run(row: ClaimedRow, claimSize: number, traced: TracedClaim | undefined): void;
  /** The longest wait after an empty round while a fair group refills (FairGroupSettler#idleCapMs), or null. */
  fairIdleCapMs(): number | null;
  /** True if the worker has a handler for this job name. */
  knows(name: string): boolean;
}

/** What one claim hands each of its jobs for its attempt's span. */
export interface TracedClaim {
  readonly tracer: Tracer;
  /** When the claim was sent (epoch ms): where each attempt's span starts. */
  readonly claimedAt: number;
  /** Links to the contexts the claimed jobs were enqueued under, by job id (jobs without one are absent). */
  readonly links: ReadonlyMap<number, Link>;
}

/**
 * The worker's one claimer: fills the free slots across the queues (in turn), a claim asking for
 * as many jobs as there are free slots (up to claimBatchSize), plus the lookahead (DrainRate):
 * jobs claimed ahead that wait in the worker for a slot. A limited queue (a cap or a rate) is
 * claimed for the free slots only, so that a cap counts no job that is not about to start. Between
 * claims it waits:
 *   - after a full claim, for half a claim of room;
 *   - after an empty round, until the earliest known run_at of a delayed job, the next poll
 *     (pollIntervalMs, doubled after each empty poll up to maxPollIntervalMs, jittered), or a
 *     ring, whichever comes first. A ring (an enqueue in this process, or this worker's doorbell)
 *     that comes while a claim is under way is kept: the round that found nothing runs again.
 */
export class ClaimLoop {
  readonly #waiters = new Set<() => void>();
  /** Each queue's claim its own way: a worker's named queues in turn, a wide worker's limited ones. */
  readonly #one: QueueClaimer;
  readonly #gates: QueueGates;
  readonly #rate = new DrainRate();
  readonly #prefetch: PayloadPrefetch;
  readonly #unknownJobs: UnknownJobsDeps;
  /** A worker on many queues or a pattern: its claims across queues (null: it claims its queues in turn). */
  readonly #wide: WideClaimer | null;
  #rung = false;
  #claimLatencyMs: number | null = null;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly options: ResolvedWorkerOptions,
    tokens: ClaimTokens,
    private readonly limit: ConcurrencyLimit,
    private readonly completions: CompletionBuffer,
    private readonly report: WorkerEvents,
    private readonly host: ClaimLoopHost,
  ) {
    this.#gates = new QueueGates(runtime.workerDb, runtime.tables, options.pollIntervalMs);
    this.#prefetch = new PayloadPrefetch(runtime.prefetchDb, runtime.tables);
    this.#unknownJobs = {
      runtime,
      report,
      knows: (name) => host.knows(name),
      delayMs: () => jittered(options.maxPollIntervalMs),
    };
    this.#one = new QueueClaimer(
      runtime,
      options,
      tokens,
      limit,
      this.#gates,
      this.#prefetch,
      this.#unknownJobs,
      report,
      {
        inFlight: () => host.inFlight(),
        claimTook: (ms) => this.#claimTook(ms),
      },
    );
    this.#wide = isWide(options.queues)
      ? new WideClaimer(runtime, options, tokens, this.#gates, report, {
          claimLimited: async (queue, want, priorities) => {
            const rows = await this.#one.claimWith(queue, want, priorities);
            for (const row of rows) this.host.run(row, rows.length, undefined);
            return rows.length;
          },
          keepKnown: (rows, lockId) => this.#keepKnown(rows, lockId),
          claimTook: (ms) => this.#claimTook(ms),
          run: async (rows, tracer, claimedAt) => {
            const traced = tracer ? await this.#traced(tracer, claimedAt, rows) : undefined;
            for (const row of rows) this.host.run(row, rows.length, traced);
          },
        })
      : null;
  }

  /** A claim across queues without the jobs of names this worker has no handler for: given back per queue. */
  async #keepKnown(rows: ClaimedRow[], lockId: string): Promise<ClaimedRow[]> {
    if (rows.every((r) => this.host.knows(r.name))) return rows;
    const kept: ClaimedRow[] = [];
    for (const queue of new Set(rows.map((r) => r.queue)))
      kept.push(
        ...(await withoutUnknownJobs(
          this.#unknownJobs,
          queue,
          lockId,
          rows.filter((r) => r.queue === queue),
        )),
      );
    return kept;
  }

  /** Moving average of the claim round trip, or null before the first claim. */
  get claimLatencyMs(): number | null {
    return this.#claimLatencyMs;
  }

  /** True when this worker claims `queue` within a cap or a rate (QueueGates). */
  limited(queue: string): boolean {
    return this.#gates.limited(queue);
  }

  /** A job may be waiting: claim now (or right after the claim under way). */
  ring(): void {
    this.#rung = true;
    this.#wide?.ring();
    this.wake();
  }

  /** Ends the current wait (a slot freed, or the worker is stopping). */
  wake(): void {
    this.#gates.slotFreed();
    for (const waiter of [...this.#waiters]) waiter();
  }

  async run(): Promise<void> {
    const { claimBatchSize, queues, pollIntervalMs, maxPollIntervalMs } = this.options;
    let nextQueue = 0;
    let lastWasFull = false;
    let pollDelayMs = pollIntervalMs;
    let dueRecheck = false;
    while (this.host.claiming()) {
      const limit = this.limit.current;
      const rated = this.#rate.lookahead(limit, this.#claimLatencyMs, this.host.processed());
      // Only limited queues (claimed for the free slots only): no room beyond the slots to fill.
      // At most one claim's worth (claimBatchSize): at high concurrency claims are wide already.
      const ahead = this.#wide || queues.some((q) => !this.#gates.limited(q)) ? Math.min(rated, claimBatchSize) : 0;
      this.host.shed(ahead);
      const room = limit + ahead;
      const free = room - this.host.inFlight();
      const threshold = lastWasFull ? Math.max(1, Math.floor(Math.min(claimBatchSize, room) / 2)) : 1;
      if (free < threshold || this.completions.backlog > 2 * room) {
        await this.idle(pollIntervalMs);
        continue;
      }
      this.#rung = false;
      let requested = 0;
      let claimed = 0;
      try {
        if (this.#wide) [requested, claimed] = await this.#wide.round(free);
        for (let i = 0; !this.#wide && i < queues.length && claimed < free; i++) {
          const queue = queues[(nextQueue + i) % queues.length] as string;
          const want = Math.min(free - claimed, claimBatchSize);
          requested += want;
          const tracer = activeTracer();
          const claimedAt = tracer ? Date.now() : 0;
          const rows = await this.#one.claim(queue, want);
          claimed += rows.length;
          const traced = tracer && rows.length > 0 ? await this.#traced(tracer, claimedAt, rows) : undefined;
          for (const row of rows) this.host.run(row, rows.length, traced);
        }
        nextQueue = (nextQueue + 1) % queues.length;
      } catch (error) {
        // A claim that still conflicted after the Executor's re-runs (on Galera: other nodes took
        // the same rows first) claimed nothing, and no job is affected: the next round is its retry.
        if (!isTransientConflict(error)) this.report.error(error, 'claiming');
        // A stop that came during the claim found no waiter to wake: do not sleep it through.
        if (this.host.claiming()) await this.idle(jittered(pollIntervalMs));
        continue;
      }
      lastWasFull = claimed > 0 && claimed === requested;
      pollDelayMs = nextPollDelayMs(pollDelayMs, claimed > 0, pollIntervalMs, maxPollIntervalMs);
      if (claimed > 0 || this.#rung) {
        dueRecheck = false;
        continue;
      }
      const pollMs = jittered(pollDelayMs);
      const { delayMs, dueAlready } = this.#wide ? this.#wide.idleDelay(pollMs) : await this.#one.idleDelay(pollMs);
      // A ring or a stop during that read found no waiter to wake: act on it now instead of
      // sleeping it through (a stop used to wait out the whole poll delay, up to maxPollIntervalMs).
      if (this.#rung || !this.host.claiming()) continue;
      // A free job due already: it fell due between the claim and that read (its run_at in the
      // same millisecond), so claim again at once — once: due jobs the next round cannot claim
      // either (a paused queue, or other workers take them first) wait for the poll.
      dueRecheck = dueAlready && !dueRecheck;
      const fairCapMs = this.host.fairIdleCapMs();
      await this.idle(dueRecheck ? 0 : fairCapMs === null ? delayMs : Math.min(delayMs, fairCapMs));
    }
    await this.#prefetch.settled();
  }

  /** Keeps the moving average of the claim round trip. */
  #claimTook(latencyMs: number): void {
    this.#claimLatencyMs = this.#claimLatencyMs === null ? latencyMs : 0.8 * this.#claimLatencyMs + 0.2 * latencyMs;
  }

  /**
   * A claim's tracing: one read of its jobs' trace contexts. The jobs are claimed already and must
   * run whatever happens here: a failed read costs their links, never their attempt.
   */
  async #traced(tracer: Tracer, claimedAt: number, rows: readonly JobRow[]): Promise<TracedClaim> {
    let links: ReadonlyMap<number, Link> = new Map();
    try {
      links = await readTraceLinks(this.runtime.workerDb, this.runtime.tables, rows);
    } catch (error) {
      this.report.error(error, 'reading the trace contexts of claimed jobs');
    }
    return { tracer, claimedAt, links };
  }

  /** Waits up to `ms`, or until wake() or ring(). */
  idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#waiters.add(done);
    });
  }
}

/** ±25 % so that a fleet started together does not poll in step. */
function jittered(ms: number): number {
  return Math.round(ms * (0.75 + Math.random() * 0.5));
}

/** Pure: the next idle poll delay — doubled after each empty poll, up to the maximum; reset after a claim. */
export function nextPollDelayMs(
  current: number,
  claimed: boolean,
  pollIntervalMs: number,
  maxPollIntervalMs: number,
): number {
  if (claimed) return pollIntervalMs;
  return Math.min(maxPollIntervalMs, Math.max(pollIntervalMs, current * 2));
}
