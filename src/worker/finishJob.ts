import { ClaimLostError } from '../errors.ts';
import { errorText } from '../errorText.ts';
import { expireIdempotencyKeys } from '../idempotency/expireIdempotencyKeys.ts';
import { attemptErrorFields } from '../model/attemptError.ts';
import { backoffDelayMs } from '../model/backoff.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import type { Backoff } from '../model/job.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { Outcome } from './attemptJob.ts';
import type { CompletionBuffer } from './CompletionBuffer.ts';
import { deadLetterJob } from './claims/deadLetterJob.ts';
import { recordAfterRow } from './claims/recordAfterRow.ts';
import { releaseClaims } from './claims/releaseClaims.ts';
import { type AttemptTrace, retryJob } from './claims/retryJob.ts';
import { snoozeJob } from './claims/snoozeJob.ts';
import type { RunningJob } from './RunningJob.ts';
import { ringFreedSlots } from './ringFreedSlots.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

export interface FinishDeps {
  readonly runtime: SluiceRuntime;
  readonly handlers: ReadonlyMap<string, JobDefinition<any>>;
  readonly completions: CompletionBuffer;
  readonly report: WorkerEvents;
  /** The worker's default backoff, for jobs and definitions that set none. */
  readonly backoff: Backoff;
  maxRetriesOf(job: RunningJob): number;
  /** Whether the worker claims a queue within a cap (ringFreedSlots: the slot an outcome frees is rung). */
  limited(queue: string): boolean;
}

/**
 * Records one attempt's outcome — the one switch over Outcome: success → fenced delete (batched
 * for at-least-once, by the CompletionBuffer); failure → fenced release with backoff; permanent
 * failure or retries exhausted → fenced move to dead_jobs (a failure writes the attempt's error
 * and its last log lines in the same transaction); cancelled → reported, and only its unwritten
 * log lines to write (the cancel already moved the row to the history); conflicts only → fenced release,
 * uncounted; snoozed → fenced release for later, uncounted (and the queue paused, if asked). A job cancelled while it ran ends as cancelled whatever its attempt came to. A job
 * released by a stop is left alone: its claim is no longer ours. Errors other than a lost claim
 * leave the claim to expire (the maintenance process then hands the job out again:
 * at-least-once) and are reported.
 */
export async function finishJob(deps: FinishDeps, running: RunningJob, attempted: Outcome): Promise<void> {
  const outcome: Outcome = running.cancelled ? { kind: 'cancelled' } : attempted;
  if (!running.finish()) return;
  const { runtime, report } = deps;
  const { job } = running;
  try {
    switch (outcome.kind) {
      case 'succeeded':
        running.dropPayload();
        deps.completions.add(running, outcome.result);
        return; // the CompletionBuffer ends it
      case 'committed':
        running.traceOutcome('succeeded');
        await startKeyRetention(runtime, [job.id], job.idempotencyKey);
        report.completed(job, running.elapsedMs);
        await afterRow(deps, running, null);
        break;
      case 'dropped':
        running.traceOutcome('dropped', outcome.error);
        report.failedAttempt(job, outcome.error, job.retryTimes + 1, running.elapsedMs);
        await startKeyRetention(runtime, [job.id], job.idempotencyKey);
        await afterRow(deps, running, outcome.error);
        break;
      case 'exhausted':
        await deadLetter(deps, running, job.retryTimes, outcome.error, outcome.error.message, false, null);
        break;
      case 'failed':
        await failed(deps, running, outcome.error, outcome.permanent);
        break;
      case 'lost':
        running.traceOutcome('lost', outcome.error);
        report.claimLost(outcome.error.operation, outcome.error.lockId, outcome.error.jobIds, outcome.error.lost);
        break;
      case 'cancelled':
        running.traceOutcome('cancelled');
        report.cancelled(job, running.elapsedMs);
        await afterRow(deps, running, null);
        break;
      case 'snoozed':
        await snoozeJob(runtime.workerDb, runtime.tables, job, outcome.delayMs, {
          queue: outcome.pauseQueue,
          group: outcome.pauseGroup,
        });
        running.traceOutcome('released', outcome.error);
        report.snoozed(job, outcome.delayMs, outcome.pauseQueue, running.elapsedMs);
        break;
      case 'conflicted':
        // Given back as a stop gives a claim back: due at once, retry_times unchanged.
        if ((await releaseClaims(runtime.workerDb, runtime.tables, job.lockId, [job.id])) === 0) {
          running.traceOutcome('lost', outcome.error);
          report.claimLost('release', job.lockId, [job.id], 1);
        } else {
          running.traceOutcome('released', outcome.error);
          report.conflicted(job, outcome.runs, outcome.error);
        }
        break;
      default:
        throw new Error(`unhandled outcome ${(outcome satisfies never as Outcome).kind}`);
    }
  } catch (error) {
    if (error instanceof ClaimLostError) {
      running.traceOutcome('lost', error);
      report.claimLost(error.operation, error.lockId, error.jobIds, error.lost);
    } else {
      running.traceOutcome('unrecorded', error);
      report.error(error, `finishing job ${job.id}`);
    }
  }
  running.end();
  // Retried, dead, snoozed, given back, cancelled: its slot of a capped queue is free (a success's is rung by the CompletionBuffer).
  ringFreedSlots(runtime, deps.limited, [job.queue]);
}

async function failed(deps: FinishDeps, running: RunningJob, error: Error, permanent: boolean): Promise<void> {
  const { job } = running;
  const attempt = job.retryTimes + 1;
  deps.report.failedAttempt(job, error, attempt, running.elapsedMs);
  const lastError = errorText(error);
  const trace = traceOf(deps, running, error);
  if (permanent || attempt > deps.maxRetriesOf(running)) {
    await deadLetter(deps, running, attempt, error, lastError, true, trace);
    return;
  }
  const definition = deps.handlers.get(job.name);
  const delayMs = backoffDelayMs(job.backoff ?? definition?.backoff ?? deps.backoff, attempt, error);
  await retryJob(deps.runtime.workerDb, deps.runtime.tables, job, delayMs, lastError, trace);
  running.traceOutcome('retried', error);
  deps.report.retried(job, delayMs, attempt);
}

async function deadLetter(
  deps: FinishDeps,
  running: RunningJob,
  retryTimes: number,
  error: Error,
  lastError: string,
  ranNow: boolean,
  trace: AttemptTrace | null,
): Promise<void> {
  const { runtime } = deps;
  const { job } = running;
  const maxRetries = deps.maxRetriesOf(running);
  const { idempotencyRetentionMs, redactPayload } = runtime.options;
  const history = runtime.retention.historyRetentionMs > 0;
  const released = await deadLetterJob(
    runtime.workerDb,
    runtime.tables,
    { id: job.id, lockId: job.lockId, retryTimes, maxRetries },
    lastError,
    redactPayload,
    trace,
    { history, keyRetentionMs: idempotencyRetentionMs, redact: redactPayload },
  );
  if (released.size > 0) runtime.ringer.ring(runtime.tables.prefix, released);
  running.traceOutcome('dead', error);
  await startKeyRetention(runtime, [job.id], job.idempotencyKey);
  deps.report.dead(job, error, ranNow);
}

/**
 * What a failed attempt leaves behind, written with its retry or dead-letter: its error (unless
 * keptAttempts is 0) and the lines it logged since its last heartbeat.
 */
function traceOf(deps: FinishDeps, running: RunningJob, error: Error | null): AttemptTrace {
  const keep = deps.runtime.options.keptAttempts;
  const { job } = running;
  return {
    failed:
      keep === 0 || error === null
        ? null
        : {
            jobId: job.id,
            attempt: job.retryTimes + 1,
            workerId: deps.report.workerId,
            error: attemptErrorFields(error),
          },
    logs: running.pendingLogs()?.rows ?? [],
    keep,
  };
}

/**
 * An attempt whose row already left the live table — at-most-once (deleted before its handler
 * ran), or cancelled while it ran — keeps its unwritten log lines, and its error if it failed, by
 * job id (no claim can write to it any more). Only with history: nothing else shows them. Nothing
 * for an attempt that neither logged nor failed.
 */
async function afterRow(deps: FinishDeps, running: RunningJob, error: Error | null): Promise<void> {
  const { runtime } = deps;
  if (runtime.retention.historyRetentionMs === 0) return;
  const trace = traceOf(deps, running, error);
  if (trace.failed === null && trace.logs.length === 0) return;
  await recordAfterRow(runtime.workerDb, runtime.tables, trace);
}

/** A finished job's idempotency key keeps refusing duplicates for the retention from now. */
async function startKeyRetention(runtime: SluiceRuntime, ids: number[], key: string | null): Promise<void> {
  if (key === null) return;
  await expireIdempotencyKeys(runtime.workerDb, runtime.tables, ids, runtime.options.idempotencyRetentionMs);
}
