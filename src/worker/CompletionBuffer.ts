import { setTimeout as sleep } from 'node:timers/promises';
import { isServerUnavailable, isTransientConflict } from '../db/mysqlErrors.ts';
import { ClaimLostError } from '../errors.ts';
import { expireIdempotencyKeys } from '../idempotency/expireIdempotencyKeys.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { JobLogRow } from './AttemptLog.ts';
import { completeJobs } from './claims/completeJobs.ts';
import { completeStillHeld } from './claims/completeStillHeld.ts';
import type { FairGroupSettler } from './FairGroupSettler.ts';
import { groupByClaim, type RunningJob } from './RunningJob.ts';
import { ringFreedSlots } from './ringFreedSlots.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/**
 * Batches successful completions: jobs that finish close together are deleted with one fenced
 * statement per claim, instead of one commit per job (which caps a 2-core host near 1,000
 * jobs/s). A flush starts on the next turn of the event loop after the first finish, with every
 * finish pending then; finishes that arrive while it runs go into another flush, which starts at
 * once unless MAX_FLUSHES are already running (so that one claim's completion overlaps the next:
 * each statement runs on one server thread, and a serial pipeline leaves the host's other core
 * idle). Every job added is ended here. Handler results
 * ride along, keyed by job id, into the same statement that copies the jobs to the history, and
 * the lines jobs logged since their last heartbeat into the same transaction.
 * A completion whose statement still met transient conflicts after the Executor's re-runs goes
 * back into the buffer for another flush (up to MAX_CONFLICT_ROUNDS): a conflict must not leave
 * the claim to expire, which would count an attempt for a job that succeeded.
 */
const MAX_CONFLICT_ROUNDS = 3;
/** Flushes running at once (each holds a pool connection per claim it completes). */
const MAX_FLUSHES = 2;

/** One claim's finished jobs, as one flush writes them. */
interface ClaimCompletion {
  readonly lockId: string;
  readonly ids: number[];
  /** Handler results (JSON text) by job id. */
  readonly results: ReadonlyMap<number, string>;
  /** The claim's queue when these are every job it took (completeJobs: found by lock_id). */
  readonly wholeClaimOf: string | readonly string[] | undefined;
  /** Lines the jobs logged and have not written yet; undefined when none did. */
  readonly logs: readonly JobLogRow[] | undefined;
  /** How many of the jobs have their payload stored apart. */
  readonly apart: number;
}

export class CompletionBuffer {
  #pending: RunningJob[] = [];
  /** Results (JSON text) of pending jobs that returned one, by job id. */
  #results = new Map<number, string>();
  /** Flushes of a job that ended in a transient conflict so far. */
  readonly #conflicts = new Map<RunningJob, number>();
  #size = 0;
  readonly #flushes = new Set<Promise<void>>();
  /** A flush is due on the next turn of the event loop. */
  #scheduled = false;

  constructor(
    private readonly runtime: SluiceRuntime,
    private readonly report: WorkerEvents,
    /** Counts the completed jobs of fair groups off their groups, after the commit. */
    private readonly fairGroups: FairGroupSettler,
    /** How long a completion is tried again while the server cannot be reached: the worker's lock timeout. */
    private readonly retryForMs: number,
    /** Called after each write: a claim loop held back by the backlog may go on. */
    private readonly onWritten: () => void,
    /** Whether a queue is claimed within a cap (QueueGates): its completions ring it (ringFreedSlots). */
    private readonly limited: (queue: string) => boolean = () => false,
  ) {}

  /** Jobs finished but not yet deleted. */
  get backlog(): number {
    return this.#size;
  }

  add(job: RunningJob, result: string | null = null): void {
    this.#pending.push(job);
    if (result !== null) this.#results.set(job.job.id, result);
    this.#size++;
    this.#schedule();
  }

  /** Resolves once every completion added so far is written (or reported as failed). */
  async drain(): Promise<void> {
    // Pending completions always have a flush scheduled or running (add and each flush's end schedule one).
    while (this.#flushes.size > 0 || this.#scheduled) {
      if (this.#flushes.size > 0) await Promise.allSettled([...this.#flushes]);
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#pending.length === 0 || this.#flushes.size >= MAX_FLUSHES) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  /** Writes every pending completion, one statement group per claim; then schedules the next flush. */
  #flush(): void {
    if (this.#pending.length === 0) return;
    const batch = this.#pending;
    const results = this.#results;
    this.#pending = [];
    this.#results = new Map();
    const flush: Promise<void> = Promise.all(
      [...groupByClaim(batch)].map(([lockId, jobs]) => this.#flushClaim(lockId, jobs, results)),
    )
      // #flushClaim reports its own failures; this only keeps a bug from stalling every later flush.
      .then(
        () => undefined,
        (error: unknown) => this.report.error(error, 'completing jobs'),
      )
      .finally(() => {
        this.#flushes.delete(flush);
        this.#schedule();
      });
    this.#flushes.add(flush);
  }

  async #flushClaim(lockId: string, jobs: RunningJob[], results: ReadonlyMap<number, string>): Promise<void> {
    const ids = jobs.map((r) => r.job.id);
    let again = false;
    /** The completion statement ran: what follows (key retention) no longer changes the outcome. */
    let written = false;
    try {
      // Every job the claim took, finished together: its rows are found by queue and lock_id, a
      // range of ix_head per queue (a claim across queues, WideClaimer's, spans up to 50).
      const first = jobs[0] as RunningJob;
      const queues = [...new Set(jobs.map((r) => r.job.queue))];
      const wholeClaimOf = jobs.length !== first.claimSize ? undefined : queues.length === 1 ? first.job.queue : queues;
      const logs = pendingLogsOf(jobs);
      const apart = jobs.filter((r) => r.payloadApart).length;
      const lostIds = await this.#completeOnceReachable({ lockId, ids, results, wholeClaimOf, logs, apart });
      written = true;
      if (lostIds.length > 0) this.report.claimLost('complete', lockId, lostIds, lostIds.length);
      const completed = lostIds.length === 0 ? jobs : jobs.filter((r) => !lostIds.includes(r.job.id));
      // Without history a lost claim leaves the deleted ones unknown (ClaimLostError): none is
      // counted off, and their fair group's count stays high until reconcileGroups recounts it.
      this.fairGroups.completed(completed);
      // Slots of a capped queue are free from this commit: its workers held back by the cap claim now.
      ringFreedSlots(
        this.runtime,
        this.limited,
        completed.map((r) => r.job.queue),
      );
      for (const r of jobs) r.traceOutcome(lostIds.length > 0 && lostIds.includes(r.job.id) ? 'lost' : 'succeeded');
      const keyed = completed.filter((r) => r.job.idempotencyKey !== null).map((r) => r.job.id);
      if (keyed.length > 0) {
        await expireIdempotencyKeys(
          this.runtime.workerDb,
          this.runtime.tables,
          keyed,
          this.runtime.options.idempotencyRetentionMs,
        );
      }
      for (const r of completed) this.report.completed(r.job, r.elapsedMs);
    } catch (error) {
      again = isTransientConflict(error) && jobs.every((r) => (this.#conflicts.get(r) ?? 0) < MAX_CONFLICT_ROUNDS);
      if (again) for (const r of jobs) this.#conflicts.set(r, (this.#conflicts.get(r) ?? 0) + 1);
      else if (error instanceof ClaimLostError) {
        if (!written) for (const r of jobs) r.traceOutcome('lost', error);
        this.report.claimLost('complete', lockId, ids, error.lost);
      }
      // Otherwise the claims stay ours until they expire; the maintenance process then hands the jobs out again (at-least-once).
      else {
        if (!written) for (const r of jobs) r.traceOutcome('unrecorded', error);
        this.report.error(error, `completing ${ids.length} job(s) of ${lockId}`);
      }
    } finally {
      if (again) {
        this.#pending.push(...jobs);
        for (const r of jobs) {
          const result = results.get(r.job.id);
          if (result !== undefined) this.#results.set(r.job.id, result);
        }
      } else {
        for (const r of jobs) {
          r.end();
          this.#conflicts.delete(r);
        }
        this.#size -= jobs.length;
        this.onWritten();
      }
    }
  }

  /**
   * #complete, tried again while the server cannot be reached (restarting, failing over, the
   * network down) for up to the worker's lock timeout, with growing pauses: the claims are still
   * ours meanwhile, the writes stay fenced, and the jobs need not wait out their lock timeout to
   * be run a second time once the server is back.
   */
  async #completeOnceReachable(claim: ClaimCompletion): Promise<number[]> {
    const deadline = Date.now() + this.retryForMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#complete(claim);
      } catch (error) {
        if (!isServerUnavailable(error) || Date.now() >= deadline) throw error;
        const what = `completing ${claim.ids.length} job(s) of ${claim.lockId}`;
        if (attempt === 1) this.report.error(error, `${what}: retrying until the server answers`);
        await sleep(Math.min(2_000, 50 * 2 ** attempt) * (0.5 + Math.random()));
      }
    }
  }

  /**
   * Completes one claim's finished jobs; returns the ids whose claim was lost. With history a lost
   * job rolls the whole statement back, so the jobs still held are completed on their own. Without
   * history the held ones are already deleted and the lost ones are not known apart: ClaimLostError
   * is thrown on, and all are reported.
   */
  async #complete({ lockId, ids, results, wholeClaimOf, logs, apart }: ClaimCompletion): Promise<number[]> {
    const { workerDb: db, tables, options } = this.runtime;
    const history = this.runtime.retention.historyRetentionMs > 0;
    const redact = options.redactPayload;
    try {
      const released = await completeJobs(db, tables, lockId, ids, {
        history,
        results,
        redact,
        wholeClaimOf,
        logs,
        apart,
      });
      // Children of a workflow these jobs released: their workers may sleep on a queue that looked empty.
      if (released.size > 0) this.runtime.ringer.ring(tables.prefix, released);
      return [];
    } catch (error) {
      if (!(error instanceof ClaimLostError) || !history) throw error;
      return completeStillHeld(db, tables, lockId, ids, { results, redact, logs });
    }
  }
}

/** The lines the jobs logged and have not written yet; undefined (and nothing allocated) when none did. */
function pendingLogsOf(jobs: readonly RunningJob[]): JobLogRow[] | undefined {
  let rows: JobLogRow[] | undefined;
  for (const r of jobs) {
    const batch = r.pendingLogs();
    if (batch === null) continue;
    rows ??= [];
    rows.push(...batch.rows);
  }
  return rows;
}
