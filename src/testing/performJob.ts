import { randomBytes } from 'node:crypto';
import { WaitTimeoutError } from '../errors.ts';
import type { JobInfo } from '../jobControl/getJob.ts';
import { type JobDefinition, jobOf, type PayloadOf } from '../model/defineJob.ts';
import type { JobContext } from '../model/job.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';
import type { Sluice } from '../Sluice.ts';

/** performJob's options. */
export interface PerformOptions {
  /** How long to wait for the handler to settle; past it the worker is forced to stop and a WaitTimeoutError is thrown. @defaultValue 30,000 */
  readonly timeoutMs?: number;
  /** The job's retry limit (`ctx.job.maxRetries`): 0 makes a failure dead-letter the job. @defaultValue the definition's */
  readonly maxRetries?: number;
  /** The job's priority. @defaultValue 0 */
  readonly priority?: number;
  /** The job's idempotency key (`ctx.job.idempotencyKey`). */
  readonly idempotencyKey?: string;
}

/** What performJob saw: the handler's own return value or thrown error, and the job as sluice then records it. */
export type PerformedJob = (
  | {
      readonly ok: true;
      /** What the handler returned (the definition types it as unknown). */
      readonly result: unknown;
    }
  | {
      /** The handler threw (a snooze throws a JobSnoozedError, a rate limit a RateLimitedError). */
      readonly ok: false;
      /** What the handler threw, the same object. */
      readonly error: unknown;
    }
) & {
  readonly id: number;
  /**
   * Every value the handler passed to ctx.progress, in order (the job's own record keeps only the
   * latest, and only once a heartbeat wrote it).
   */
  readonly progress: readonly unknown[];
  /**
   * `sluice.jobs.get(id)` once the attempt was recorded: 'completed' (with logs, progress and
   * result; null when the install keeps no history), 'retrying' or 'dead' after a failure,
   * 'delayed' after a snooze.
   */
  readonly job: JobInfo | null;
};

const OPTION_KEYS = ['timeoutMs', 'maxRetries', 'priority', 'idempotencyKey'];

type Settled = { ok: true; result: unknown } | { ok: false; error: unknown };

/**
 * Runs one job of `definition` with `payload` through a real worker of this process and returns
 * what its handler returned or threw (River's rivertest worker, Oban's perform_job). The job is
 * enqueued on a queue of its own (`ctx.job.queue` is `testing.perform.<random>`), so no other job
 * runs; its ctx is the real one (signal, progress, log, parents, snooze, and for an exactly-once
 * definition the transaction its completion commits in); the definition's debounce and throttle do
 * not apply (the job runs now). The worker stops once the attempt is
 * recorded; a job left to run again (a retry, a snooze) is then cancelled, so nothing runs later.
 */
export async function performJob<D extends JobDefinition<any>>(
  sluice: Sluice,
  definition: D,
  payload: PayloadOf<D>,
  options: PerformOptions = {},
): Promise<PerformedJob> {
  rejectUnknownKeys('performJob', options, OPTION_KEYS);
  const timeoutMs = integerIn('timeoutMs', options.timeoutMs ?? 30_000, 1, 3_600_000);
  const queue = `testing.perform.${randomBytes(6).toString('hex')}`;
  let settle: (settled: Settled) => void = () => undefined;
  const settled = new Promise<Settled>((resolve) => (settle = resolve));
  const progress: unknown[] = [];
  const watched: JobDefinition<any> = {
    ...definition,
    async handle(p, ctx) {
      try {
        const result = await definition.handle(p, recording(ctx, progress));
        settle({ ok: true, result });
        return result;
      } catch (error) {
        settle({ ok: false, error });
        throw error;
      }
    },
  };
  const { maxRetries, priority, idempotencyKey } = options;
  // The definition's debounce or throttle would delay or drop the one job asked for: it runs now.
  const {
    debounce: _debounce,
    throttle: _throttle,
    ...spec
  } = jobOf(definition, payload, {
    queue,
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(priority === undefined ? {} : { priority }),
    ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
  });
  const { id } = await sluice.enqueue(spec);
  const worker = sluice.worker({
    queues: [queue],
    jobs: [watched],
    concurrency: 1,
    doorbell: false,
    pollIntervalMs: 100,
    maxPollIntervalMs: 200,
  });
  await worker.start();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    settled,
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === null) {
    await worker.forceStop();
    await sluice.jobs.cancel(id);
    throw new WaitTimeoutError(id, timeoutMs);
  }
  // Lets the attempt finish: its outcome written (the exactly-once transaction committed), its completion flushed.
  await worker.stop();
  const job = await sluice.jobs.get(id);
  if (job && ['waiting', 'delayed', 'retrying'].includes(job.state)) await sluice.jobs.cancel(id);
  return { ...outcome, id, progress, job };
}

/** The worker's ctx, each member passed through, with the progress values also kept in `seen`. */
function recording<P>(ctx: JobContext<P>, seen: unknown[]): JobContext<P> {
  return {
    get job() {
      return ctx.job;
    },
    get signal() {
      return ctx.signal;
    },
    get logger() {
      return ctx.logger;
    },
    get knex() {
      return ctx.knex;
    },
    get trx() {
      return ctx.trx;
    },
    progress(value) {
      seen.push(value);
      ctx.progress(value);
    },
    log: (message, fields) => ctx.log(message, fields),
    parents: () => ctx.parents(),
    snooze: (delayMs) => ctx.snooze(delayMs),
  };
}
