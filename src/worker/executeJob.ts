import type { Logger } from 'pino';
import type { SluiceContext } from '../context.ts';
import { retryTransient } from '../db/transaction.ts';
import { ClaimLostError, UnknownJobTypeError } from '../errors.ts';
import type { ResolvedWorkerOptions } from '../options.ts';
import type { Job, JobDefinition } from '../types.ts';
import { backoffDelayMs } from './backoff.ts';
import type { Cancellation } from './Cancellation.ts';
import type { CompletionBuffer } from './CompletionBuffer.ts';
import { deadLetterJob } from './deadLetterJob.ts';
import { expireIdempotencyKeys } from './expireIdempotencyKeys.ts';
import { retryJob } from './retryJob.ts';
import { runAttempt, type AttemptResult } from './runAttempt.ts';

/** One claimed job while this worker holds it. */
export interface RunningJob {
  readonly job: Job;
  readonly startedAt: number;
  /** Aborts the handler's signal: claim lost, or forced stop. */
  readonly cancel: Cancellation;
  /** Set when shutdown released the claim: the attempt's outcome is no longer ours to write. */
  abandoned: boolean;
  /**
   * Set once the claim has nothing left to extend or release: the handler returned and its
   * outcome is being written, or (at-most-once) the row was deleted before the handler ran. The
   * heartbeat and a stop leave the job alone.
   */
  finishing?: boolean;
  /** Set when the heartbeat found the claim lost (reported; not extended again). */
  lost?: boolean;
  /** Set when the stored payload could not be parsed: the job fails permanently without running. */
  readonly payloadError?: Error;
}

export interface ExecuteDeps {
  readonly ctx: SluiceContext;
  readonly options: ResolvedWorkerOptions;
  readonly handlers: ReadonlyMap<string, JobDefinition<any>>;
  readonly completions: CompletionBuffer;
  readonly workerId: string;
  readonly logger: Logger;
}

const MAX_ERROR_CHARS = 8_000;

/**
 * Runs one claimed job to its outcome under its delivery mode (runAttempt): success → fenced
 * delete (batched for at-least-once); failure → fenced
 * release with backoff; permanent failure or retries exhausted → fenced move to dead_jobs.
 * A job already over its retries when claimed (its earlier claims expired) is dead-lettered
 * without running.
 */
/** Returns true when the attempt failed (retried, dead-lettered or dropped). */
export async function executeJob(deps: ExecuteDeps, running: RunningJob): Promise<boolean> {
  const { ctx, options, handlers, workerId } = deps;
  const { job } = running;
  const definition = handlers.get(job.name);
  const maxRetries = job.maxRetries ?? definition?.maxRetries ?? options.maxRetries;
  try {
    if (job.retryTimes > maxRetries) {
      const reason = `retries exhausted: ${job.retryTimes} failed attempt(s) > maxRetries ${maxRetries} (its last claim expired: the worker died or stalled)`;
      await deadLetter(deps, job, job.retryTimes, maxRetries, reason);
      return true;
    }
    const outcome: AttemptResult = running.payloadError
      ? { kind: 'failed', error: running.payloadError, permanent: true, dropped: false }
      : definition
        ? await runAttempt({
            ctx,
            definition,
            job,
            logger: () => deps.logger.child({ jobId: job.id, job: job.name }),
            cancel: running.cancel,
            onRemoved: () => (running.finishing = true),
          })
        : { kind: 'failed', error: new UnknownJobTypeError(job.name, [...handlers.keys()]), permanent: false, dropped: false };
    running.finishing = true;
    // A claim the heartbeat found lost is still finished through the fence: the write matches
    // nothing and is reported, which is the proof the zombie case needs.
    if (running.abandoned && outcome.kind !== 'completed') return false;
    if (outcome.kind === 'deferred') {
      deps.completions.add(job, Date.now() - running.startedAt);
      return false;
    }
    if (outcome.kind === 'completed') {
      await startKeyRetention(deps, job);
      ctx.events.emit('job:completed', { workerId, jobId: job.id, name: job.name, queue: job.queue, durationMs: Date.now() - running.startedAt });
      return false;
    }
    const attempt = job.retryTimes + 1;
    ctx.events.emit('job:failed', { workerId, jobId: job.id, name: job.name, queue: job.queue, error: outcome.error, attempt });
    if (outcome.dropped) {
      await startKeyRetention(deps, job);
      return true;
    }
    const lastError = describeError(outcome.error);
    if (outcome.permanent || attempt > maxRetries) {
      await deadLetter(deps, job, attempt, maxRetries, lastError);
    } else {
      const delayMs = backoffDelayMs(job.backoff ?? definition?.backoff ?? options.backoff, attempt, outcome.error);
      await retryTransient(() => retryJob(ctx.db, ctx.tables, job, delayMs, lastError));
      ctx.events.emit('job:retried', { workerId, jobId: job.id, name: job.name, delayMs, retryTimes: attempt });
    }
    return true;
  } catch (error) {
    if (error instanceof ClaimLostError) {
      ctx.events.emit('claim:lost', { workerId, operation: error.operation, lockId: error.lockId, jobIds: error.jobIds, lost: error.lost });
    } else {
      // Our claim stands until it expires; the sweeper then releases the job (at-least-once).
      ctx.events.emit('worker:error', { workerId, error: error as Error, context: `finishing job ${job.id}` });
    }
    return false;
  }
}

async function deadLetter(deps: ExecuteDeps, job: Job, retryTimes: number, maxRetries: number, lastError: string): Promise<void> {
  await deadLetterJob(deps.ctx.db, deps.ctx.tables, { id: job.id, lockId: job.lockId, retryTimes, maxRetries }, lastError);
  await startKeyRetention(deps, job);
  deps.ctx.events.emit('job:dead', { workerId: deps.workerId, jobId: job.id, name: job.name, queue: job.queue, error: lastError });
}

/** A finished job's idempotency key keeps refusing duplicates for the retention from now. */
async function startKeyRetention(deps: ExecuteDeps, job: Job): Promise<void> {
  if (job.idempotencyKey === null) return;
  await expireIdempotencyKeys(deps.ctx.db, deps.ctx.tables, [job.id], deps.ctx.options.idempotencyRetentionMs);
}

function describeError(error: Error): string {
  const text = error.stack ?? `${error.name}: ${error.message}`;
  return text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS)}…` : text;
}
