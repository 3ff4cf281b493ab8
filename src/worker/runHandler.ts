import { HandlerTimeoutError, PermanentJobError } from '../errors.ts';
import type { JobContext, JobDefinition } from '../types.ts';

export type HandlerOutcome =
  | { readonly ok: true }
  | { readonly ok: false; readonly error: Error; readonly permanent: boolean };

/**
 * Runs one handler attempt. Its ctx.signal aborts on timeout or when `cancelSignal` fires (claim lost, forced stop); a
 * timed-out attempt counts as failed even if the handler ignores the signal.
 */
export async function runHandler<P>(
  definition: JobDefinition<P>,
  payload: P,
  ctx: Omit<JobContext<P>, 'signal'>,
  cancelSignal: AbortSignal,
): Promise<HandlerOutcome> {
  const controller = new AbortController();
  const onCancel = () => controller.abort(cancelSignal.reason);
  if (cancelSignal.aborted) onCancel();
  cancelSignal.addEventListener('abort', onCancel, { once: true });
  let timer: NodeJS.Timeout | undefined;
  try {
    const attempt = Promise.resolve().then(() => definition.handle(payload, { ...ctx, signal: controller.signal }));
    if (definition.timeoutMs === undefined) {
      await attempt;
    } else {
      const timeoutMs = definition.timeoutMs;
      await Promise.race([
        attempt,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            const error = new HandlerTimeoutError(definition.name, timeoutMs);
            controller.abort(error);
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
    cancelSignal.removeEventListener('abort', onCancel);
  }
}
