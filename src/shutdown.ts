import type { Logger } from 'pino';

export interface Stoppable {
  stop(): Promise<void>;
  forceStop?(): Promise<void>;
}

/**
 * SIGINT (PM2's signal) or SIGTERM → graceful stop; a second signal → forceStop. Resolves once
 * the target has stopped. PM2's kill_timeout must exceed the graceful deadline.
 */
export function stopOnSignals(target: Stoppable, logger: Logger): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping: Promise<void> | undefined;
    const onSignal = (signal: NodeJS.Signals) => {
      if (!stopping) {
        logger.info({ event: 'shutdown:requested', signal }, `${signal}: stopping gracefully (send again to force)`);
        stopping = target.stop();
        stopping.then(resolve, reject);
      } else if (target.forceStop) {
        logger.warn({ event: 'shutdown:forced', signal }, `${signal} again: forcing stop`);
        void target.forceStop();
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}
