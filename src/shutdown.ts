import type { Logger } from 'pino';

/** What stopOnSignals stops: a Worker, a Maintenance, or anything with the same stop()/forceStop(). */
export interface Stoppable {
  /** Graceful: a Worker stops claiming and lets running jobs finish for up to its shutdownTimeoutMs. */
  stop(): Promise<void>;
  /** Called on a second signal: a Worker aborts running jobs and releases their claims. */
  forceStop?(): Promise<void>;
}

/**
 * SIGINT (PM2's signal, Ctrl-C) or SIGTERM → `target.stop()`; a second signal while it stops →
 * `target.forceStop()`. Resolves once the target has stopped (rejects if stop() does), then leaves
 * the signals to Node again. PM2's kill_timeout must exceed the graceful deadline.
 *
 * ```ts
 * import { stopOnSignals } from 'sluice';
 *
 * const worker = sluice.worker({ jobs: 'jobs' });
 * await worker.start();
 * await stopOnSignals(worker, sluice.logger);
 * await sluice.close();
 * ```
 */
export function stopOnSignals(target: Stoppable, logger?: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping: Promise<void> | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (!stopping) {
        logger?.info({ event: 'shutdown:requested', signal }, `${signal}: stopping gracefully (send again to force)`);
        stopping = target.stop();
        stopping.then(done(resolve), done(reject));
      } else if (target.forceStop) {
        logger?.warn({ event: 'shutdown:forced', signal }, `${signal} again: forcing stop`);
        void target.forceStop();
      }
    };
    const done =
      <T>(settle: (value: T) => void) =>
      (value: T) => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        settle(value);
      };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
