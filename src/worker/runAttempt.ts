import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { SluiceContext } from '../context.ts';
import { isTransientConflict } from '../db/mysqlErrors.ts';
import { retryTransient, withTransaction } from '../db/transaction.ts';
import { ClaimLostError } from '../errors.ts';
import type { Job, JobDefinition } from '../types.ts';
import type { Cancellation } from './Cancellation.ts';
import { completeJobs } from './completeJobs.ts';
import { runHandler, type HandlerOutcome } from './runHandler.ts';

/**
 * How an attempt's outcome was (or will be) recorded:
 * - `deferred`: the handler succeeded; the caller queues the fenced delete (at-least-once).
 * - `completed`: the job row is already gone (exactly-once: in the handler's transaction;
 *   at-most-once: before the handler ran).
 * - `failed`: the handler failed; for `dropped` jobs (at-most-once) there is nothing to release.
 */
export type AttemptResult =
  | { readonly kind: 'deferred' }
  | { readonly kind: 'completed' }
  | { readonly kind: 'failed'; readonly error: Error; readonly permanent: boolean; readonly dropped: boolean };

export interface AttemptInput {
  readonly ctx: SluiceContext;
  readonly definition: JobDefinition<any>;
  readonly job: Job;
  /** Creates the job's logger (only if its handler asks for ctx.logger). */
  readonly logger: () => Logger;
  readonly cancel: Cancellation;
  /** Called once the job's row is deleted before its handler runs (at-most-once). */
  readonly onRemoved?: () => void;
}

/** Rolls the handler's transaction back without surfacing as an error of its own. */
class RollbackForFailure extends Error {
  constructor(readonly outcome: Extract<HandlerOutcome, { ok: false }>) {
    super('handler failed: transaction rolled back');
  }
}

/**
 * Runs one attempt under the job's delivery mode (see README "Delivery modes"):
 * - at-least-once (default): run, then the job is deleted (batched, fenced) after success.
 * - exactly-once: run with ctx.trx; the fenced delete runs in that same transaction, so the
 *   handler's writes and the job's removal commit together or not at all. A lost claim throws
 *   ClaimLostError inside the transaction and rolls the handler's writes back. A deadlock or
 *   lock-wait timeout (in the handler's writes, the delete or the commit) has rolled everything
 *   back: the transaction, handler included, runs again (up to 3 times) — a conflict is not a
 *   failure of the job.
 * - at-most-once: the fenced delete commits first, then the handler runs; a crash or failure
 *   loses the job, by choice.
 */
export async function runAttempt({ ctx, definition, job, logger, cancel, onRemoved }: AttemptInput): Promise<AttemptResult> {
  const base = { job, logger, knex: ctx.knex };
  const delivery = definition.delivery ?? 'at-least-once';
  const history = ctx.options.historyRetentionMs > 0;
  if (delivery === 'at-most-once') {
    await retryTransient(() => completeJobs(ctx.db, ctx.tables, job.lockId, [job.id], { history }));
    onRemoved?.();
    const outcome = await runHandler(definition, job.payload, base, cancel);
    return outcome.ok ? { kind: 'completed' } : { kind: 'failed', error: outcome.error, permanent: outcome.permanent, dropped: true };
  }
  if (delivery === 'exactly-once') {
    try {
      await withTransaction(
        ctx.db,
        async (tx) => {
          const outcome = await runHandler(definition, job.payload, { ...base, trx: tx.knex as Knex.Transaction }, cancel);
          if (!outcome.ok) throw isTransientConflict(outcome.error) ? outcome.error : new RollbackForFailure(outcome);
          await completeJobs(tx, ctx.tables, job.lockId, [job.id], { history });
        },
        { attempts: 3 },
      );
      return { kind: 'completed' };
    } catch (error) {
      if (error instanceof RollbackForFailure) return { kind: 'failed', error: error.outcome.error, permanent: error.outcome.permanent, dropped: false };
      if (error instanceof ClaimLostError) throw error;
      // A lost connection, or conflicts past the last re-run, rolled the handler's writes back
      // with the transaction: the attempt failed and is retried like any other failure.
      return { kind: 'failed', error: error as Error, permanent: false, dropped: false };
    }
  }
  const outcome = await runHandler(definition, job.payload, base, cancel);
  return outcome.ok ? { kind: 'deferred' } : { kind: 'failed', error: outcome.error, permanent: outcome.permanent, dropped: false };
}
