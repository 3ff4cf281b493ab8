import { withTransaction } from '../db/transaction.ts';
import { settleGroups } from '../groups/settleGroup.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { RunningJob } from './RunningJob.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/**
 * A count not settled this long (the server unreachable meanwhile) is dropped rather than kept: by
 * then reconcileGroups may have recounted the group (its default quietMs is 60 s), and counting the
 * jobs off again would put the group below its real count. Dropped, the count stays too high
 * (conservative) until the group goes quiet and is recounted.
 */
const MAX_UNSETTLED_MS = 10_000;

/**
 * How long after its last completed fair share a worker counts as draining a fair group. Meanwhile a
 * claim round that found nothing waits at most two settle intervals: the window refills in pages,
 * released by whichever worker's settle gets there, and a ring from another process can come late
 * (its ringer may not yet have seen this worker asleep), while the worker's poll delay grows to seconds.
 */
const DRAINING_MS = 1_000;

interface Freed {
  readonly queue: string;
  readonly group: string;
  freed: number;
  /** When the first of these completions was counted (Date.now()). */
  since: number;
}

/**
 * Settles the fair groups of this worker's completed jobs after their commit, instead of inside it.
 *
 * A fair window is a soft bound: it only keeps one group from flooding the claim's head range. If
 * every completion locked its group's job_groups row until its commit (the exact accounting that
 * concurrency limits need), the completions of a dominant group would take turns on that one row
 * across the whole fleet: measured, half the drain of the same jobs on a queue that is not fair. So a
 * fair share's completion is the plain fenced delete (src/worker/claims/completeJobs.ts) and this
 * buffer counts it, per (queue, group); every `intervalMs` (jittered ±50 %) it settles the groups
 * with counts in one short transaction (settleGroups: lock their rows, count the jobs off, and —
 * for each group with at most three quarters of its window live — refill the window in one page). A
 * dominant group thus costs a worker one small transaction per interval, and a release per quarter
 * window of jobs.
 *
 * A worker that dies with counts unsettled leaves its groups' rows too high: the window shrinks for
 * a while, at worst to nothing with jobs still held; reconcileGroups recounts such a group once its
 * row has been quiet for its quietMs, and releases them. A graceful stop settles what is pending.
 */
export class FairGroupSettler {
  #pending = new Map<string, Freed>();
  #timer: NodeJS.Timeout | undefined;
  #settling: Promise<void> | undefined;
  /** When this worker last completed a fair share (performance.now()). */
  #lastCompletedAt = Number.NEGATIVE_INFINITY;
  /** Stopping: no timer is set again; drain() settles what is left. */
  #draining = false;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly report: WorkerEvents,
    /** The worker's fairSettleIntervalMs. */
    private readonly intervalMs: number,
  ) {}

  /** Jobs whose completion has committed: each of a fair group counts off its group at the next settle. */
  completed(jobs: readonly RunningJob[]): void {
    let counted = false;
    for (const r of jobs) {
      if (r.fairGroup === null) continue;
      this.#count(r.job.queue, r.fairGroup, 1, Date.now());
      counted = true;
    }
    if (!counted) return;
    this.#lastCompletedAt = performance.now();
    this.#schedule();
  }

  /** While this worker drains a fair group (DRAINING_MS), the longest wait after an empty claim round; else null. */
  idleCapMs(): number | null {
    return performance.now() - this.#lastCompletedAt < DRAINING_MS ? 2 * this.intervalMs : null;
  }

  /** Settles what is pending now and stops the timer (a worker's stop). Counts that fail are left to reconcileGroups. */
  async drain(): Promise<void> {
    this.#draining = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#settling;
    if (this.#pending.size > 0) await this.#settle(false);
  }

  #count(queue: string, group: string, freed: number, since: number): void {
    const key = `${queue}\u0000${group}`;
    const entry = this.#pending.get(key);
    if (entry) {
      entry.freed += freed;
      entry.since = Math.min(entry.since, since);
    } else this.#pending.set(key, { queue, group, freed, since });
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#settling !== undefined || this.#draining) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#settling = this.#settle(true).finally(() => {
          this.#settling = undefined;
          if (this.#pending.size > 0) this.#schedule();
        });
      },
      this.intervalMs * (0.5 + Math.random()),
    );
  }

  /**
   * One short transaction for every pending group (settleGroups: a few statements per
   * GROUPS_PER_STATEMENT groups, whatever their number); when it fails, its counts are kept for
   * the next settle while young (`retry`).
   */
  async #settle(retry: boolean): Promise<void> {
    const { workerDb: db, tables, ringer } = this.runtime;
    const batch = [...this.#pending.values()];
    this.#pending = new Map();
    try {
      const released = await withTransaction(db, (tx) =>
        settleGroups(
          tx,
          tables,
          batch.map(({ queue, group, freed }) => ({ queue, group, freed, limit: null })),
        ),
      );
      if (released.size > 0) ringer.ring(tables.prefix, released);
    } catch (error) {
      const now = Date.now();
      for (const { queue, group, freed, since } of batch)
        if (retry && now - since < MAX_UNSETTLED_MS) this.#count(queue, group, freed, since);
      const freed = batch.reduce((sum, b) => sum + b.freed, 0);
      this.report.error(error, `settling ${freed} finished job(s) of ${batch.length} fair group(s)`);
    }
  }
}
