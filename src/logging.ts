import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';
import { errorFields } from './errorText.ts';
import type { SluiceEventMap, SluiceEvents } from './events.ts';

export type { Logger } from 'pino';

/**
 * Paths pino censors in every line (`[redacted]`), whatever an event or an application's child
 * logger puts there: credentials by their usual names, at the top and one level down, and in the
 * shapes HTTP clients attach to their errors.
 */
export const DEFAULT_REDACT_PATHS = [
  'password',
  '*.password',
  'secret',
  '*.secret',
  'token',
  '*.token',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  '*.headers.cookie',
  '*.config.headers.Authorization',
  '*.config.headers.authorization',
];

/**
 * The level of a logger given none and no `LOG_LEVEL`: a library is quiet in an application's
 * scripts (an enqueue logs at info), and still says when something went wrong. The `sluice`
 * commands ask for 'info' (cli/openSluice.ts).
 */
const QUIET_LEVEL = 'warn';

/**
 * pino, JSON by default; pretty when stdout is a terminal. `level`, else `LOG_LEVEL`, else 'warn'
 * sets the level. `redact` adds the application's own secret paths to DEFAULT_REDACT_PATHS.
 */
export function createLogger(
  options: { name?: string; level?: string; redact?: readonly string[]; destination?: DestinationStream } = {},
): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? QUIET_LEVEL;
  const pretty = process.stdout.isTTY === true && options.destination === undefined;
  const settings: LoggerOptions = {
    name: options.name ?? 'sluice',
    level,
    redact: { paths: [...DEFAULT_REDACT_PATHS, ...(options.redact ?? [])], censor: '[redacted]' },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
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
  logJobs(events, logger);
  logJobTrouble(events, logger);
  logWorkers(events, logger);
  logBatches(events, logger);
  logMaintenance(events, logger);
}

/** A job's way through a worker: claimed and completed (debug), failed, retried, dead-lettered, cancelled. */
function logJobs(events: SluiceEvents, logger: Logger): void {
  // Per-job lines are debug: build their fields only when debug is on (these fire thousands of times a second).
  events.on(
    'job:claimed',
    (e) => logger.isLevelEnabled('debug') && logger.debug(fields('job:claimed', e), 'jobs claimed'),
  );
  events.on(
    'job:completed',
    (e) => logger.isLevelEnabled('debug') && logger.debug(fields('job:completed', e), 'job completed'),
  );
  events.on('job:failed', ({ error, ...e }) =>
    logged(
      logger,
      'warn',
      fields('job:failed', e),
      error,
      (message) => `job ${e.jobId} (${e.name}) failed: ${message}`,
    ),
  );
  events.on('job:snoozed', (e) =>
    logger.info(
      fields('job:snoozed', e),
      e.pausedQueue ? `job snoozed, queue ${e.queue} paused for ${e.delayMs} ms` : 'job snoozed',
    ),
  );
  events.on('job:unknown', (e) => {
    if (!e.firstSeen && !logger.isLevelEnabled('debug')) return;
    const text =
      `no handler in this worker for job(s) ${e.names.join(', ')} (queue ${e.queue}): ${e.jobIds.length} job(s) ` +
      `given back for ${e.delayMs} ms, no attempt spent; a worker whose jobs folder has them will run them`;
    if (e.firstSeen) logger.warn(fields('job:unknown', e), text);
    else logger.debug(fields('job:unknown', e), text);
  });
  events.on('job:retried', (e) => logger.info(fields('job:retried', e), 'job released for retry'));
  events.on('job:dead', ({ error, ...e }) =>
    logged(
      logger,
      'error',
      fields('job:dead', e),
      error,
      (message) => `job ${e.jobId} (${e.name}) dead-lettered: ${message}`,
    ),
  );
  events.on('job:cancelled', (e) => logger.info(fields('job:cancelled', e), `job ${e.jobId} (${e.name}) cancelled`));
}

/** What went wrong around a job without failing it: a dropped result, a conflicted transaction, a lost claim. */
function logJobTrouble(events: SluiceEvents, logger: Logger): void {
  events.on('result:dropped', (e) =>
    logger.warn(
      fields('result:dropped', e),
      `job ${e.jobId} (${e.name}) succeeded; its result was dropped: ${e.reason}`,
    ),
  );
  events.on('progress:dropped', (e) =>
    logger.warn(fields('progress:dropped', e), `job ${e.jobId} (${e.name}): a progress value was dropped: ${e.reason}`),
  );
  events.on('job:conflicted', ({ error, ...e }) =>
    logged(
      logger,
      'warn',
      fields('job:conflicted', e),
      error,
      () =>
        `job ${e.jobId} (${e.name}): its transaction conflicted ${e.runs} times; claim given back, no attempt counted`,
    ),
  );
  events.on('claim:lost', (e) =>
    logger.warn(
      fields('claim:lost', e),
      `${e.operation}: claim ${e.lockId} lost for ${e.lost} job(s); nothing written`,
    ),
  );
}

/** A worker's life: started, stopping, stopped, its concurrency, its errors, its failed wake-ups. */
function logWorkers(events: SluiceEvents, logger: Logger): void {
  events.on('worker:started', (e) =>
    logger.info(
      fields('worker:started', e),
      `worker started on queues ${e.queues.join(', ')}: ${e.jobs.length} job type(s)${e.jobsFolder ? ` from ${e.jobsFolder}` : ''} (${e.jobs.join(', ') || 'none'})`,
    ),
  );
  events.on('worker:stopping', (e) => logger.info(fields('worker:stopping', e), 'worker stopping'));
  events.on('worker:stopped', (e) => logger.info(fields('worker:stopped', e), 'worker stopped'));
  events.on('worker:concurrency', (e) =>
    logger.info(
      fields('worker:concurrency', e),
      `concurrency ${e.from} → ${e.to} (cpu ${e.cpu.toFixed(2)}, free memory ${e.freeMem.toFixed(2)})`,
    ),
  );
  events.on('worker:error', ({ error, ...e }) =>
    logged(logger, 'error', fields('worker:error', e), error, (message) => message),
  );
  events.on('doorbell:error', ({ error, ...e }) =>
    logged(
      logger,
      'warn',
      fields('doorbell:error', e),
      error,
      (message) => `wake-up failed (${e.context}): ${message}`,
    ),
  );
}

/** Batches enqueued and finished, and the scheduler's enqueues. */
function logBatches(events: SluiceEvents, logger: Logger): void {
  events.on('batch:enqueued', (e) => logger.info(fields('batch:enqueued', e), 'batch enqueued'));
  events.on('enqueue:throttled', (e) => logger.info(fields('enqueue:throttled', e), 'jobs throttled'));
  events.on('batch:finished', (e) => logger.info(fields('batch:finished', e), `batch ${e.batchId} finished`));
  events.on('schedule:enqueued', (e) =>
    (e.duplicate ? logger.debug : logger.info).call(
      logger,
      fields('schedule:enqueued', e),
      e.duplicate ? 'slot already enqueued elsewhere' : `scheduled ${e.name}@${e.slot}`,
    ),
  );
}

/**
 * The maintenance process: its start, its leadership, its passes (info only when a pass changed
 * something), the claims it had to skip, its errors.
 */
function logMaintenance(events: SluiceEvents, logger: Logger): void {
  events.on('maintenance:started', (e) =>
    logger.info(
      fields('maintenance:started', e),
      `maintenance started (${e.schedule}); recurring jobs: ${e.scheduled.join(', ') || 'none'}${e.jobsFolder ? ` from ${e.jobsFolder}` : ''}`,
    ),
  );
  events.on('leader:acquired', (e) => logger.info(fields('leader:acquired', e), 'maintenance leadership acquired'));
  events.on('leader:lost', (e) =>
    e.released
      ? logger.info(fields('leader:lost', e), 'maintenance leadership released at stop')
      : logger.warn(fields('leader:lost', e), 'maintenance leadership lost'),
  );
  events.on('maintenance:completed', (e) =>
    (e.changed > 0 ? logger.info : logger.debug).call(
      logger,
      fields('maintenance:completed', e),
      'maintenance pass completed',
    ),
  );
  events.on('maintenance:skipped', (e) =>
    logger.warn(
      fields('maintenance:skipped', e),
      `${e.task}: could not release ${e.jobIds.length} job(s) in queue ${e.queue}${e.workerId ? ` of dead worker ${e.workerId}` : ''}: ${e.reason}; will try again next pass`,
    ),
  );
  events.on('promise:broken', (e) =>
    logger.warn(
      fields('promise:broken', e),
      `queue ${e.queue} broke its promise: ${e.breaches.map((b) => breachText(b, e)).join('; ')}`,
    ),
  );
  events.on('promise:kept', (e) =>
    logger.info(
      fields('promise:kept', e),
      `queue ${e.queue} keeps its promise again, after ${seconds(e.brokenForMs)} behind`,
    ),
  );
  events.on('settings:unshared', (e) =>
    logger.warn(
      fields('settings:unshared', e),
      `${e.setting} ${e.given} is this process's own: the install stores none, so other processes may follow another; store it for all with \`sluice settings set\``,
    ),
  );
  events.on('settings:overridden', (e) =>
    logger.warn(
      fields('settings:overridden', e),
      `${e.setting}: following the install's ${e.stored}, not this process's ${e.given}`,
    ),
  );
  events.on('maintenance:error', ({ error, ...e }) =>
    logged(logger, 'error', fields('maintenance:error', e), error, (message) => message),
  );
}

/** One broken half of a promise, for a log line. */
function breachText(breach: 'startWithin' | 'maxReady', e: SluiceEventMap['promise:broken']): string {
  return breach === 'startWithin'
    ? `the oldest ready job waited ${seconds(e.oldestReadyMs ?? 0)} (promised ${seconds(e.startWithinMs ?? 0)})`
    : `${e.ready.count}${e.ready.exact ? '' : '+'} jobs ready (promised at most ${e.maxReady})`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A line about an error: the error's type, message, code and stack, each bounded — never the error
 * object itself, whose other fields (an HTTP client's request config, its headers) can carry
 * secrets and megabytes.
 */
function logged(
  logger: Logger,
  level: 'warn' | 'error',
  line: Record<string, unknown>,
  error: unknown,
  message: (errorMessage: string) => string,
): void {
  const err = errorFields(error);
  logger[level]({ ...line, err }, message(err.message));
}
