import type { Knex } from 'knex';
import type { Logger } from 'pino';
import { HandlerTimeoutError, PermanentJobError } from '../errors.ts';
import type { Job, JobContext, JobDefinition } from '../types.ts';
import type { Cancellation } from './Cancellation.ts';

export type HandlerOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: Error; readonly permanent: boolean };

/** What a handler's ctx is made of; the logger is created only if the handler reads it. */
export interface HandlerScope {
  readonly job: Job;
  readonly knex: Knex;
  readonly trx?: Knex.Transaction;
  readonly logger: () => Logger;
}

/**
 * Runs one handler attempt. `cancel` is the running job's Cancellation: its signal is the
 * handler's ctx.signal, aborted when the claim is lost, on a forced stop, or here on timeout. A
 * timed-out attempt counts as failed even if the handler ignores the signal.
 */
export async function runHandler<P>(definition: JobDefinition<P>, payload: P, scope: HandlerScope, cancel: Cancellation): Promise<HandlerOutcome> {
  let timer: NodeJS.Timeout | undefined;
  let logger: Logger | undefined;
  const ctx = {
    job: scope.job as Job<P>,
    knex: scope.knex,
    trx: scope.trx,
    get signal(): AbortSignal {
      return cancel.signal;
    },
    get logger(): Logger {
      logger ??= scope.logger();
      return logger;
    },
  } satisfies JobContext<P>;
  try {
    const attempt = Promise.resolve().then(() => definition.handle(payload, ctx));
    if (definition.timeoutMs === undefined) {
      await attempt;
    } else {
      const timeoutMs = definition.timeoutMs;
      await Promise.race([
        attempt,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const error = new HandlerTimeoutError(definition.name, timeoutMs);
            cancel.abort(error);
            reject(error);
          }, timeoutMs);
        }),
      ]);
    }
    return { ok: true };
  } catch (thrown) {
    const error = thrown instanceof Error ? thrown : new Error(`handler threw a non-Error: ${String(thrown)}`);
    return { ok: false, error, permanent: error instanceof PermanentJobError || (error as { code?: string }).code === 'SLUICE_PERMANENT' };
  } finally {
    if (timer) clearTimeout(timer);
  }
}
