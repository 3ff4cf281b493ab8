import type { Span } from '@opentelemetry/api';
import { JobCancelledError, PayloadRefusedError, PermanentJobError } from '../errors.ts';
import { type Job, jobWithPayload, parseStoredPayload } from '../model/job.ts';
import { type AttemptOutcome, recordOutcome } from '../tracing/jobSpans.ts';
import { AttemptLog, type LogBatch } from './AttemptLog.ts';
import { Cancellation } from './Cancellation.ts';
import { type ClaimedRow, fairGroupOf, payloadApartOf } from './claims/claimedRow.ts';

/**
 * One claimed job while this worker holds it, and the one place that knows what state it is in.
 *
 *          ┌── detach() ──▶ detached ──┐   (at-most-once: the row was deleted before the handler)
 *          │                           │
 *   running ── lose() ───▶ lost ───────┼── finish() ──▶ finishing ── end() ──▶ ended
 *     │  ▲                             │                   │
 *     │  └──────────── resume() ───────┼───────────────────┘ (exactly-once: a conflict re-runs
 *     │                                │                      the transaction, handler included)
 *     └── finish() ────────────────────┘
 *     └── release() ──▶ released  (a stop gave the claim back: the outcome is no longer ours)
 *     └── cancel() ───▶ cancelled ── finish() ──▶ finishing ── end() ──▶ ended
 *                                    (the outcome is "cancelled", whatever the handler returns)
 *
 * - running: the handler runs under a claim this worker holds. Only here does the heartbeat
 *   extend the claim, and only from here can a stop release it or the heartbeat declare it lost.
 * - detached: the handler runs; the row is already gone, so there is nothing to extend or release.
 * - lost: the heartbeat found the claim taken back; the signal is aborted. When the handler
 *   returns, its outcome is still written through the fence — which matches nothing and is
 *   reported, as it must be for a zombie.
 * - cancelled: the heartbeat found the job cancelled (sluice.jobs.cancel moved it to the history
 *   as cancelled: the row is gone, so no write of ours can match it and nobody can claim it
 *   again); the signal is aborted with JobCancelledError. Whatever the handler does next, the job
 *   ends as cancelled: finishJob writes nothing and reports `job:cancelled`; an exactly-once
 *   handler's transaction rolls back. Only a running job can be cancelled: a detached one's row
 *   was already gone, and a lost one's claim is someone else's.
 * - finishing: the outcome is being written (for exactly-once: from just before the fenced
 *   delete inside the handler's transaction). The heartbeat and a stop leave it alone, so a
 *   commit the worker itself just made is never mistaken for a lost claim.
 * - released / ended: nothing more to do; the job leaves the worker's slots once its handler settles.
 */
export type RunningJobState = 'running' | 'detached' | 'lost' | 'cancelled' | 'finishing' | 'released' | 'ended';

export class RunningJob {
  readonly startedAt = Date.now();
  readonly cancellation = new Cancellation();
  #state: RunningJobState = 'running';
  /** The handler's own promises (one per attempt; an exactly-once job may run its handler again). */
  readonly #handlers: Promise<unknown>[] = [];
  /** Progress reported by the handler and not yet written (JSON text); the heartbeat takes it. */
  #progress: string | undefined;
  /** Lines the handler logged and not yet written; made on its first ctx.log (a job that never logs has none). */
  #log: AttemptLog | undefined;

  /** The attempt's span has ended (it ends once, with the attempt's outcome). */
  #spanClosed = false;
  #job: Job;
  /** The payload as the claim read it, until openPayload parses it into the job. */
  #stored: string | Buffer | null;
  /** Set when the stored payload was refused or could not be parsed: the job fails permanently without running. */
  #payloadError: PayloadRefusedError | PermanentJobError | null = null;

  constructor(
    job: Job,
    /** How many jobs the claim statement that took this one took in all (its lock_id's rows). */
    readonly claimSize = 1,
    /** The payload as the claim read it (JSON), when `job` does not carry it parsed yet. */
    stored: string | Buffer | null = null,
    /** This attempt's span, from its claim to its outcome, when a tracer is registered (src/tracing/). */
    readonly span?: Span,
    /** Its payload is stored apart (job_payloads): a completion without history deletes it there too. */
    readonly payloadApart = false,
    /** The group of a fair queue whose window the job counts in (flag fairShare): settled after its completion. */
    readonly fairGroup: string | null = null,
  ) {
    this.#job = job;
    this.#stored = stored;
  }

  /** The job as claimed; its payload is null until openPayload, and once the attempt succeeded (dropPayload). */
  get job(): Job {
    return this.#job;
  }

  /**
   * Parses the payload the claim read, once, as the attempt starts: a job claimed ahead holds only
   * the driver's bytes while it waits for a slot (outside the JavaScript heap), not a parsed copy
   * that the collector would copy from generation to generation. Returns the error of a payload
   * refused unread (PayloadRefusedError: not what sluice writes, or past any payload's size) or
   * that is not JSON (written around sluice): the job then fails permanently without running.
   */
  openPayload(): PayloadRefusedError | PermanentJobError | null {
    const stored = this.#stored;
    if (stored === null) return this.#payloadError;
    this.#stored = null;
    try {
      this.#job = { ...this.#job, payload: parseStoredPayload(stored, this.payloadApart ? 'apart' : 'row') };
    } catch (error) {
      const reason = (error as Error).message;
      this.#payloadError =
        error instanceof PayloadRefusedError
          ? error
          : new PermanentJobError(`payload of job ${this.#job.id} is not valid JSON: ${reason}`);
    }
    return this.#payloadError;
  }

  /**
   * A succeeded attempt only waits for its batched completion, which needs the job's identity and
   * never its payload: the job is kept without it, so that a payload of kilobytes is garbage as
   * soon as the handler lets go of it, not when the completion commits (a worker at high
   * concurrency holds hundreds of completions, and the collector copied their payloads over and
   * over). The handler's own ctx.job keeps the payload it was given.
   */
  dropPayload(): void {
    if (this.#job.payload !== null) this.#job = { ...this.#job, payload: null };
  }

  /** Records what the attempt came to on its span (nothing without one). */
  traceOutcome(outcome: AttemptOutcome, error?: unknown): void {
    if (this.span && !this.#spanClosed) recordOutcome(this.span, outcome, error);
  }

  /** Ends the attempt's span, once: end() and release() do, and the worker for an attempt that threw. */
  closeSpan(): void {
    if (!this.span || this.#spanClosed) return;
    this.#spanClosed = true;
    this.span.end();
  }

  get state(): RunningJobState {
    return this.#state;
  }

  /** Whether the claim is this worker's to extend, release or declare lost right now. */
  get holdsClaim(): boolean {
    return this.#state === 'running';
  }

  get elapsedMs(): number {
    return Date.now() - this.startedAt;
  }

  /** Records a handler's own promise: the job keeps its slot until every one of them settled. */
  track(handler: Promise<unknown>): void {
    this.#handlers.push(handler);
  }

  /**
   * Resolves when every handler run of this job settled. A handler that ignores its signal past
   * its timeout has its failure recorded at the timeout, but goes on counting against the
   * worker's concurrency until it settles — so hung handlers cannot pile up beyond it.
   */
  async settled(): Promise<void> {
    await Promise.allSettled(this.#handlers);
  }

  /** at-most-once: the row was deleted before the handler runs. */
  detach(): void {
    this.#move(['running'], 'detached');
  }

  /** The heartbeat found the claim gone: aborts the signal. False if the job was not running. */
  lose(): boolean {
    if (!this.#move(['running'], 'lost')) return false;
    this.cancellation.abort(new Error(`claim ${this.job.lockId} on job ${this.job.id} was lost`));
    return true;
  }

  /** The heartbeat found the job cancelled: aborts the signal with JobCancelledError. False if the job was not running. */
  cancel(): boolean {
    if (!this.#move(['running'], 'cancelled')) return false;
    this.cancellation.abort(new JobCancelledError(this.job.id));
    return true;
  }

  get cancelled(): boolean {
    return this.#state === 'cancelled';
  }

  /** ctx.progress(): keeps the latest value; the heartbeat writes it (one write per beat, however many calls). */
  reportProgress(json: string): void {
    this.#progress = json;
  }

  /** The progress reported since the last take, if any (the heartbeat writes it). */
  takeProgress(): string | undefined {
    const progress = this.#progress;
    this.#progress = undefined;
    return progress;
  }

  /** A write of taken progress failed: keep it for the next beat, unless a newer value came meanwhile. */
  restoreProgress(json: string): void {
    this.#progress ??= json;
  }

  /** ctx.log(): keeps the line for the next write (a heartbeat, or the attempt's end), or counts it as dropped. */
  log(message: string, fields: unknown, maxLines: number, maxBytes: number): void {
    this.#log ??= new AttemptLog(this.job.id, this.job.retryTimes + 1, maxLines, maxBytes);
    this.#log.add(message, fields);
  }

  /** The logged lines not yet written (see AttemptLog), or null: none, or the job never logged. */
  pendingLogs(): LogBatch | null {
    return this.#log?.pending() ?? null;
  }

  /** A write of `batch` committed. */
  logsWritten(batch: LogBatch): void {
    this.#log?.written(batch);
  }

  /** A stop gives the claim back: aborts the signal. False if the job was not running. */
  release(): boolean {
    if (!this.#move(['running'], 'released')) return false;
    this.cancellation.abort(new Error('worker stopped before the job finished'));
    this.traceOutcome('released');
    this.closeSpan();
    return true;
  }

  /** The outcome is about to be written (or, cancelled, reported). False if it is no longer ours (released). */
  finish(): boolean {
    return this.#move(['running', 'detached', 'lost', 'cancelled', 'finishing'], 'finishing');
  }

  /** exactly-once: the transaction runs again, the claim still held. */
  resume(): void {
    this.#move(['finishing'], 'running');
  }

  /** The outcome is written (or found lost): nothing more to do. */
  end(): void {
    if (this.#move(['finishing'], 'ended')) this.closeSpan();
  }

  #move(from: readonly RunningJobState[], to: RunningJobState): boolean {
    if (!from.includes(this.#state)) return false;
    this.#state = to;
    return true;
  }
}

/** Groups jobs (or anything carrying one) by the claim that holds them: every fenced write is per claim. */
export function groupByClaim<T extends { readonly job: { readonly lockId: string } }>(
  items: Iterable<T>,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.job.lockId);
    if (group) group.push(item);
    else groups.set(item.job.lockId, [item]);
  }
  return groups;
}

/** A claimed row as a RunningJob, its payload parsed when it starts (openPayload). */
export function runningJobOf(row: ClaimedRow, claimSize: number, span: Span | undefined): RunningJob {
  return new RunningJob(jobWithPayload(row, null), claimSize, row.payload, span, payloadApartOf(row), fairGroupOf(row));
}
