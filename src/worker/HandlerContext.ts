import type { Knex } from 'knex';
import type { Logger } from 'pino';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { Job, JobContext, ParentResult } from '../model/job.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import type { ResolvedSluiceOptions } from '../options.ts';
import { JobSnoozedError } from '../snoozeErrors.ts';
import { readParents } from '../workflows/readParents.ts';
import { boundedJson, MAX_PROGRESS_BYTES } from './boundedJson.ts';
import type { Cancellation } from './Cancellation.ts';
import type { RunningJob } from './RunningJob.ts';

/** What a handler's ctx is made of. */
export interface HandlerScope {
  readonly running: RunningJob;
  readonly knex: Knex;
  readonly trx?: Knex.Transaction;
  /** Makes the job's logger (only if the handler reads ctx.logger). */
  readonly loggerOf: (running: RunningJob) => Logger;
  /** The attempt's timeout: the definition's, else the worker's jobTimeoutMs. */
  readonly timeoutMs: number;
  /** What ctx.log keeps: the install's options (a shared object, not one per job). */
  readonly logLimits: Pick<ResolvedSluiceOptions, 'keptAttempts' | 'maxLogLines' | 'maxLogBytes'>;
  /** Reports a progress value that could not be kept (a `progress:dropped` warning). */
  readonly progressDropped: (running: RunningJob, reason: string) => void;
  /** Where ctx.parents() reads (the worker's pool and the install's tables). */
  readonly reads: { readonly workerDb: Executor; readonly tables: Tables };
}

/**
 * A handler's ctx. Its getters, progress() and log() live on the prototype, so a context costs one
 * object per attempt and no closure: at drain rates a closure per job is measurable, and under
 * tsx each named closure also costs a defineProperty for its name (the drain A/B of issue 13 put
 * two such closures at ~2 µs of worker CPU per job). The signal and the logger are made only when
 * read.
 */
export class HandlerContext<P> implements JobContext<P> {
  #logger: Logger | undefined;
  /** The job as the handler got it: the worker lets go of the payload once the attempt succeeded (RunningJob.dropPayload). */
  readonly #job: Job<P>;

  constructor(
    private readonly scope: HandlerScope,
    private readonly cancellation: Cancellation,
  ) {
    this.#job = scope.running.job as Job<P>;
  }

  get job(): Job<P> {
    return this.#job;
  }

  get knex(): Knex {
    return this.scope.knex;
  }

  get trx(): Knex.Transaction | undefined {
    return this.scope.trx;
  }

  get signal(): AbortSignal {
    return this.cancellation.signal;
  }

  get logger(): Logger {
    this.#logger ??= this.scope.loggerOf(this.scope.running);
    return this.#logger;
  }

  /**
   * Keeps the latest value for the heartbeat to write. A value that is not JSON as given or is over
   * MAX_PROGRESS_BYTES is dropped with a `progress:dropped` warning, as a result is: progress is
   * a report, and a bad one must not fail the attempt.
   */
  progress(value: unknown): void {
    const encoded = boundedJson(value, MAX_PROGRESS_BYTES, 'progress');
    if ('problem' in encoded) this.scope.progressDropped(this.scope.running, `the progress value ${encoded.problem}`);
    else if (encoded.json !== null) this.scope.running.reportProgress(encoded.json);
  }

  /** One read of job_edges (and job_history) when the handler asks; none for a job outside a workflow. */
  async parents(): Promise<readonly ParentResult[]> {
    const { job } = this.scope.running;
    if ((job.flags & JOB_FLAGS.hasParents) === 0) return [];
    return readParents(this.scope.reads.workerDb, this.scope.reads.tables, job.id);
  }

  snooze(delayMs: number): never {
    throw new JobSnoozedError(delayMs);
  }

  log(message: string, fields?: Readonly<Record<string, unknown>>): void {
    const { keptAttempts, maxLogLines, maxLogBytes } = this.scope.logLimits;
    if (keptAttempts === 0 || maxLogLines === 0) return;
    this.scope.running.log(String(message), fields, maxLogLines, maxLogBytes);
  }
}
