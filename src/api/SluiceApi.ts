import type { Logger } from 'pino';
import type { EnqueueOptions } from '../enqueue/enqueueBatch.ts';
import type { EnqueueResult } from '../enqueue/enqueueJob.ts';
import type { JobSpec } from '../model/job.ts';
import type { BatchesApi } from './batchesApi.ts';
import type { DeadJobsApi } from './deadJobsApi.ts';
import type { HistoryApi } from './historyApi.ts';
import type { JobsApi } from './jobsApi.ts';
import type { QueuesApi } from './queuesApi.ts';
import type { SchedulesApi } from './schedulesApi.ts';
import type { SettingsApi } from './settingsApi.ts';
import type { WorkersApi } from './workersApi.ts';

/**
 * The public surface of one install, grouped by noun. `Sluice` implements it; the dashboard, the
 * CLI and the metrics read and act only through it, so each sees what an application sees.
 */
export interface SluiceApi {
  /** The install's logger (surfaces log their own failures through it). */
  readonly logger: Logger;
  /** Enqueues one job (Sluice also takes a job definition and its typed payload). */
  enqueue(job: JobSpec, options?: EnqueueOptions): Promise<EnqueueResult>;
  /** Every job, wherever it is (live, history, dead): look up, list, count, cancel, run now, wait for. */
  readonly jobs: JobsApi;
  readonly queues: QueuesApi;
  readonly batches: BatchesApi;
  readonly deadJobs: DeadJobsApi;
  readonly workers: WorkersApi;
  readonly history: HistoryApi;
  readonly schedules: SchedulesApi;
  readonly settings: SettingsApi;
}
