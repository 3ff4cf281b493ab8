import { pino, type Logger } from 'pino';
import type { SluiceEvents } from './events.ts';

export type { Logger } from 'pino';

/** pino, JSON by default; pretty when stdout is a terminal. `LOG_LEVEL` sets the level. */
export function createLogger(options: { name?: string; level?: string } = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const pretty = process.stdout.isTTY === true;
  return pino({
    name: options.name ?? 'sluice',
    level,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } } : {}),
  });
}

/** Log fields of an event: its `name` (a job's name) is logged as `job`, so it never replaces pino's logger name. */
function fields<E extends object>(event: string, payload: E): Record<string, unknown> {
  const { name, ...rest } = payload as E & { name?: unknown };
  return name === undefined ? { event, ...rest } : { event, ...rest, job: name };
}

/**
 * The one subscriber that turns events into log lines. Info only when something changed;
 * per-job lines are debug.
 */
export function subscribeLogger(events: SluiceEvents, logger: Logger): void {
  events.on('batch:enqueued', (e) => logger.info(fields('batch:enqueued', e), 'batch enqueued'));
  // Per-job lines are debug: build their fields only when debug is on (these fire thousands of times a second).
  events.on('job:claimed', (e) => logger.isLevelEnabled('debug') && logger.debug(fields('job:claimed', e), 'jobs claimed'));
  events.on('job:completed', (e) => logger.isLevelEnabled('debug') && logger.debug(fields('job:completed', e), 'job completed'));
  events.on('job:failed', ({ error, ...e }) =>
    logger.warn({ ...fields('job:failed', e), err: error }, `job ${e.jobId} (${e.name}) failed: ${error.message}`),
  );
  events.on('job:retried', (e) => logger.info(fields('job:retried', e), 'job released for retry'));
  events.on('job:dead', (e) => logger.error(fields('job:dead', e), `job ${e.jobId} (${e.name}) dead-lettered`));
  events.on('claim:lost', (e) =>
    logger.warn(fields('claim:lost', e), `${e.operation}: claim ${e.lockId} lost for ${e.lost} job(s); nothing written`),
  );
  events.on('worker:started', (e) => logger.info(fields('worker:started', e), 'worker started'));
  events.on('worker:stopping', (e) => logger.info(fields('worker:stopping', e), 'worker stopping'));
  events.on('worker:stopped', (e) => logger.info(fields('worker:stopped', e), 'worker stopped'));
  events.on('worker:concurrency', (e) => logger.info(fields('worker:concurrency', e), `concurrency ${e.from} → ${e.to} (cpu ${e.cpu.toFixed(2)}, free memory ${e.freeMem.toFixed(2)})`));
  events.on('worker:error', ({ error, ...e }) => logger.error({ ...fields('worker:error', e), err: error }, error.message));
  events.on('batch:finished', (e) => logger.info(fields('batch:finished', e), `batch ${e.batchId} finished`));
  events.on('schedule:enqueued', (e) =>
    (e.duplicate ? logger.debug : logger.info).call(logger, fields('schedule:enqueued', e), e.duplicate ? 'slot already enqueued elsewhere' : `scheduled ${e.name}@${e.slot}`),
  );
  events.on('leader:acquired', (e) => logger.info(fields('leader:acquired', e), 'maintenance leadership acquired'));
  events.on('leader:lost', (e) => logger.warn(fields('leader:lost', e), 'maintenance leadership lost'));
  events.on('sweep:completed', (e) => {
    const changed = e.released + e.deadLettered + e.batchesFinished + e.keysPruned + e.workersRemoved + e.historyPruned + e.deadPruned > 0;
    (changed ? logger.info : logger.debug).call(logger, fields('sweep:completed', e), 'sweep completed');
  });
  events.on('maintenance:error', ({ error, ...e }) =>
    logger.error({ ...fields('maintenance:error', e), err: error }, error.message),
  );
}
