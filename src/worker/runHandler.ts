import { context } from '@opentelemetry/api';
import { HandlerTimeoutError, PermanentJobError } from '../errors.ts';
import { coerceError } from '../errorText.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { handlerContextOf } from '../tracing/jobSpans.ts';
import type { Cancellation } from './Cancellation.ts';
import { HandlerContext, type HandlerScope } from './HandlerContext.ts';

/** ok: what the handler returned (undefined when it returned nothing). */
export type HandlerOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: Error; readonly permanent: boolean };

/**
 * Runs one handler attempt. `cancel` is the running job's Cancellation: its signal is the
 * handler's ctx.signal, aborted when the claim is lost, the job is cancelled, on a forced stop, or
 * here on timeout (scope.timeoutMs: the definition's, else the worker's jobTimeoutMs). A timed-out
 * attempt counts as failed even if the handler ignores the signal; the handler's own promise is
 * tracked on the running job, which keeps its slot until it settles. Whatever the handler throws
 * becomes an Error. On success the outcome carries what the handler returned (its result).
 */
export async function runHandler<P>(
  definition: JobDefinition<P>,
  scope: HandlerScope,
  cancel: Cancellation,
): Promise<HandlerOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const ctx = new HandlerContext<P>(scope, cancel);
  try {
    const { span } = scope.running;
    // Inside its attempt's span, the handler's own spans are that span's children.
    const attempt = Promise.resolve().then(() =>
      span === undefined
        ? definition.handle(ctx.job.payload, ctx)
        : context.with(handlerContextOf(span), definition.handle, definition, ctx.job.payload, ctx),
    );
    scope.running.track(attempt);
    const { timeoutMs } = scope;
    const value = await Promise.race([
      attempt,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new HandlerTimeoutError(definition.name, timeoutMs);
          cancel.abort(error);
          reject(error);
        }, timeoutMs);
      }),
    ]);
    return { ok: true, value };
  } catch (thrown) {
    const error = coerceError(thrown);
    return { ok: false, error, permanent: error instanceof PermanentJobError || codeOf(error) === 'SLUICE_PERMANENT' };
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function codeOf(error: Error): unknown {
  try {
    return (error as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}
