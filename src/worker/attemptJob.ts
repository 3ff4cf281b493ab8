import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { isTransientConflict } from '../db/mysqlErrors.ts';
import { withTransaction } from '../db/transaction.ts';
import { ClaimLostError, PermanentJobError, RetriesExhaustedError, UnknownJobTypeError } from '../errors.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { JobSnoozedError, MAX_SNOOZE_MS } from '../snoozeErrors.ts';
import type { LogBatch } from './AttemptLog.ts';
import { boundedJson } from './boundedJson.ts';
import { completeJobs } from './claims/completeJobs.ts';
import { writeJobLogs } from './claims/writeJobLogs.ts';
import type { FairGroupSettler } from './FairGroupSettler.ts';
import type { HandlerScope } from './HandlerContext.ts';
import type { RunningJob } from './RunningJob.ts';
import { type HandlerOutcome, runHandler } from './runHandler.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/**
 * What one attempt came to; finishJob records it with one exhaustive switch.
 * - succeeded: the handler succeeded; its fenced delete is still to be written (at-least-once),
 *   with its result (JSON text, or null: none, or not kept).
 * - committed: the row is already gone (exactly-once: in the handler's transaction; at-most-once:
 *   before the handler ran).
 * - failed: release with backoff, or dead-letter (permanent, or out of retries).
 * - dropped: at-most-once and the handler failed: the row is gone, nothing to release.
 * - exhausted: claimed with its retries already used up (its earlier claims expired): dead-letter
 *   without running.
 * - lost: a fenced write of the attempt itself found the claim gone.
 * - cancelled: the job was cancelled while it ran (RunningJob `cancelled`): its row is already in
 *   the history as cancelled; whatever the handler did, nothing is written. finishJob also turns
 *   any outcome of a job cancelled meanwhile into this one.
 * - snoozed: the handler snoozed (ctx.snooze, JobSnoozedError, RateLimitedError): release for
 *   later without counting an attempt (exactly-once: its transaction rolled back first).
 * - conflicted: exactly-once, and every run of its transaction met a transient conflict (a
 *   deadlock, a lock-wait timeout, a Galera certification failure): give the claim back
 *   uncounted — a conflict is not a failure of the job.
 */
export type Outcome =
  | { readonly kind: 'succeeded'; readonly result: string | null }
  | { readonly kind: 'committed' }
  | { readonly kind: 'failed'; readonly error: Error; readonly permanent: boolean }
  | { readonly kind: 'dropped'; readonly error: Error }
  | { readonly kind: 'exhausted'; readonly error: RetriesExhaustedError }
  | { readonly kind: 'lost'; readonly error: ClaimLostError }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'conflicted'; readonly error: Error; readonly runs: number }
  | {
      readonly kind: 'snoozed';
      readonly delayMs: number;
      readonly pauseQueue: boolean;
      readonly pauseGroup: boolean;
      readonly error: Error;
    };

export interface AttemptDeps {
  readonly runtime: SluiceRuntime;
  readonly handlers: ReadonlyMap<string, JobDefinition<any>>;
  readonly report: WorkerEvents;
  /** Counts completed jobs of fair groups off their groups after the commit. */
  readonly fairGroups: FairGroupSettler;
  /** The retry limit in force for a job (its own, its definition's, the worker's default). */
  maxRetriesOf(job: RunningJob): number;
  /** The job's logger, made only if its handler reads ctx.logger. */
  loggerOf(job: RunningJob): Logger;
  /** An attempt's timeout when its definition sets none. */
  readonly jobTimeoutMs: number;
  /** ctx.progress got a value it cannot keep (WorkerEvents#progressDropped, bound once per worker). */
  readonly progressDropped: (running: RunningJob, reason: string) => void;
}

/** Runs one attempt of a claimed job under its delivery mode (see README "Delivery modes"). */
export async function attemptJob(deps: AttemptDeps, running: RunningJob): Promise<Outcome> {
  const { job } = running;
  const maxRetries = deps.maxRetriesOf(running);
  if (job.retryTimes > maxRetries) {
    return { kind: 'exhausted', error: new RetriesExhaustedError(job.retryTimes, maxRetries) };
  }
  const payloadError = running.openPayload();
  if (payloadError) return { kind: 'failed', error: payloadError, permanent: true };
  const definition = deps.handlers.get(job.name);
  if (!definition) {
    return { kind: 'failed', error: new UnknownJobTypeError(job.name, [...deps.handlers.keys()]), permanent: false };
  }
  try {
    switch (definition.delivery ?? 'at-least-once') {
      case 'at-least-once': {
        const outcome = await runHandler(definition, scopeOf(deps, definition, running), running.cancellation);
        if (!outcome.ok) return failedOf(outcome);
        return { kind: 'succeeded', result: resultOf(deps, running, outcome.value) };
      }
      case 'at-most-once':
        return await atMostOnce(deps, definition, running);
      case 'exactly-once':
        return await exactlyOnce(deps, definition, running);
    }
  } catch (error) {
    if (error instanceof ClaimLostError) return { kind: 'lost', error };
    throw error;
  }
}

/** The fenced delete commits first, then the handler runs; a failure loses the job, by choice. */
async function atMostOnce(deps: AttemptDeps, definition: JobDefinition<any>, running: RunningJob): Promise<Outcome> {
  const { runtime } = deps;
  const { job } = running;
  const released = await completeJobs(runtime.workerDb, runtime.tables, job.lockId, [job.id], {
    history: hasHistory(runtime),
    redact: runtime.options.redactPayload,
    apart: running.payloadApart ? 1 : 0,
  });
  if (released.size > 0) runtime.ringer.ring(runtime.tables.prefix, released);
  deps.fairGroups.completed([running]);
  running.detach();
  const outcome = await runHandler(definition, scopeOf(deps, definition, running), running.cancellation);
  return outcome.ok ? { kind: 'committed' } : { kind: 'dropped', error: outcome.error };
}

/** Rolls the handler's transaction back because the job was cancelled while it ran. */
class RollbackForCancel extends Error {
  constructor() {
    super('job cancelled: transaction rolled back');
  }
}

/** How many times an exactly-once transaction runs in all before a conflicting job is given back. */
const EXACTLY_ONCE_RUNS = 3;

/** Rolls the handler's transaction back without surfacing as an error of its own. */
class RollbackForFailure extends Error {
  constructor(readonly outcome: Extract<HandlerOutcome, { ok: false }>) {
    super('handler failed: transaction rolled back');
  }
}

/**
 * The handler runs with ctx.trx and the fenced delete runs in that same transaction, so its
 * writes and the job's removal commit together or not at all. The job is `finishing` from just
 * before the delete: its heartbeat must not read the delete it is about to commit as a lost
 * claim. A transient conflict has rolled everything back: the transaction, handler included, runs
 * again (up to EXACTLY_ONCE_RUNS times in all), and if every run conflicted the claim is given
 * back uncounted — a conflict is never a failure of the job. A lost claim throws ClaimLostError
 * inside the transaction and rolls the handler's writes back; so does a cancel noticed while the
 * handler ran (and a cancel that commits first makes the fenced delete match nothing: the same
 * rollback). The result is written with the history row, and the lines the handler logged since
 * the last heartbeat before it, in the transaction.
 */
async function exactlyOnce(deps: AttemptDeps, definition: JobDefinition<any>, running: RunningJob): Promise<Outcome> {
  const { runtime } = deps;
  const { job } = running;
  let logs = null as LogBatch | null; // taken by the run of the transaction that commits
  let released: ReadonlyMap<string, number> = new Map(); // children of a workflow, from the run that commits
  try {
    await withTransaction(
      runtime.db,
      async (tx) => {
        running.resume();
        if (running.cancelled) throw new RollbackForCancel();
        const outcome = await runHandler(
          definition,
          { ...scopeOf(deps, definition, running), trx: tx.knex as Knex.Transaction },
          running.cancellation,
        );
        if (running.cancelled) throw new RollbackForCancel();
        if (!outcome.ok) throw isTransientConflict(outcome.error) ? outcome.error : new RollbackForFailure(outcome);
        const result = resultOf(deps, running, outcome.value);
        if (!running.finish()) throw new ClaimLostError('complete', job.lockId, [job.id], 1);
        logs = hasHistory(runtime) ? running.pendingLogs() : null;
        if (logs) await writeJobLogs(tx, runtime.tables, job.lockId, logs.rows);
        released = await completeJobs(tx, runtime.tables, job.lockId, [job.id], {
          history: hasHistory(runtime),
          redact: runtime.options.redactPayload,
          results: result === null ? undefined : new Map([[job.id, result]]),
          apart: running.payloadApart ? 1 : 0,
        });
      },
      { attempts: EXACTLY_ONCE_RUNS },
    );
    if (logs) running.logsWritten(logs);
    if (released.size > 0) runtime.ringer.ring(runtime.tables.prefix, released);
    deps.fairGroups.completed([running]);
    return { kind: 'committed' };
  } catch (error) {
    if (error instanceof RollbackForCancel) return { kind: 'cancelled' };
    if (error instanceof RollbackForFailure) return failedOf(error.outcome);
    if (error instanceof ClaimLostError) throw error;
    if (isTransientConflict(error)) return { kind: 'conflicted', error: error as Error, runs: EXACTLY_ONCE_RUNS };
    // A lost connection rolled the handler's writes back with the transaction: the attempt failed
    // and is retried like any other failure.
    return { kind: 'failed', error: error as Error, permanent: false };
  }
}

function failedOf(outcome: Extract<HandlerOutcome, { ok: false }>): Outcome {
  const snooze = snoozeOf(outcome.error);
  if (snooze) return { kind: 'snoozed', ...snooze, error: outcome.error };
  return {
    kind: 'failed',
    error: outcome.error,
    permanent: outcome.error instanceof PermanentJobError || outcome.permanent,
  };
}

/**
 * A snooze the handler asked for: a JobSnoozedError (or RateLimitedError), also one from another
 * copy of sluice, known by its code. Null for any other error.
 */
function snoozeOf(error: Error): { delayMs: number; pauseQueue: boolean; pauseGroup: boolean } | null {
  if (error instanceof JobSnoozedError)
    return { delayMs: error.delayMs, pauseQueue: error.pauseQueue, pauseGroup: error.pauseGroup };
  const { code, delayMs, pauseQueue, pauseGroup } = error as {
    code?: unknown;
    delayMs?: unknown;
    pauseQueue?: unknown;
    pauseGroup?: unknown;
  };
  if ((code === 'SLUICE_SNOOZED' || code === 'SLUICE_RATE_LIMITED') && typeof delayMs === 'number' && delayMs >= 0)
    return {
      delayMs: Math.min(Math.ceil(delayMs), MAX_SNOOZE_MS),
      pauseQueue: pauseQueue === true,
      pauseGroup: pauseGroup === true,
    };
  return null;
}

/**
 * The handler's return value as the JSON text kept with the job's history row, or null: it
 * returned nothing, no history is kept, results are off (maxResultBytes 0), or it is too big or
 * not JSON as given (a NaN, a Map: boundedJson) — then it is dropped with a `result:dropped`
 * warning naming where, and the job still succeeds: its work is done, and failing the attempt
 * would run that work again for the sake of a report.
 */
function resultOf(deps: AttemptDeps, running: RunningJob, value: unknown): string | null {
  const { runtime } = deps;
  if (value === undefined || !hasHistory(runtime) || runtime.options.maxResultBytes === 0) return null;
  const encoded = boundedJson(value, runtime.options.maxResultBytes, 'result');
  if ('json' in encoded) return encoded.json;
  deps.report.resultDropped(running.job, `the result ${encoded.problem}`);
  return null;
}

/** What the handler's ctx is made of: plain references, no closure per job (see HandlerContext). */
function scopeOf(deps: AttemptDeps, definition: JobDefinition<any>, running: RunningJob): HandlerScope {
  return {
    running,
    knex: deps.runtime.knex,
    loggerOf: deps.loggerOf,
    timeoutMs: definition.timeoutMs ?? deps.jobTimeoutMs,
    logLimits: deps.runtime.options,
    progressDropped: deps.progressDropped,
    reads: deps.runtime,
  };
}

function hasHistory(runtime: SluiceRuntime): boolean {
  return runtime.retention.historyRetentionMs > 0;
}
