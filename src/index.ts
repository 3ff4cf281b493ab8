export type { GraphJob, GraphPage } from './api/batchesApi.ts';
export type {
  GroupLimits,
  GroupState,
  QueueLimits,
  QueueLimitsState,
  QueueList,
  QueueListOptions,
  QueuePromise,
  QueuePromiseState,
  QueueStats,
  RecordedQueueDepth,
} from './api/queuesApi.ts';
export type { InstallSettings, InstallSettingsUpdate } from './api/settingsApi.ts';
export type { BatchStatus } from './batches/getBatch.ts';
export { type BasicAuthCredentials, basicAuth } from './dashboard/basicAuth.ts';
export type { DashboardHandler } from './dashboard/createDashboard.ts';
export type { DashboardAuth, DashboardOptions } from './dashboard/dashboardOptions.ts';
export { maskSecrets, type PayloadMask } from './dashboard/maskSecrets.ts';
export type { DeadJobFilter } from './deadJobs/deadJobFilter.ts';
export type { FailureGroup, FailureGroupOptions, FailureGroups } from './deadJobs/failureGroups.ts';
export type { DeadJob } from './deadJobs/listDeadJobs.ts';
export type { EnqueueBatchOptions, EnqueueBatchResult, EnqueueOptions } from './enqueue/enqueueBatch.ts';
export type { EnqueueResult } from './enqueue/enqueueJob.ts';
export type { EnqueueStreamOptions, EnqueueStreamResult } from './enqueue/enqueueStream.ts';
export {
  BatchTooLargeError,
  ClaimLostError,
  ConnectionError,
  DashboardRequestError,
  DoorbellUnreachableError,
  HandlerTimeoutError,
  JobCancelledError,
  JobDeadError,
  JobDefinitionError,
  JobNotFoundError,
  JobValidationError,
  OptionsError,
  PayloadRefusedError,
  PermanentJobError,
  PermanentJobError as PermanentError,
  RetriesExhaustedError,
  SchemaVersionError,
  SluiceError,
  UnknownJobTypeError,
  WaitTimeoutError,
} from './errors.ts';
export type { PromiseBroken, PromiseKept, SluiceEventMap, SluiceEventName, SluiceEvents } from './events.ts';
export type { GroupHold } from './groups/readGroupHold.ts';
export type { JobCount } from './jobControl/countJobs.ts';
export type { JobInfo, JobLock } from './jobControl/getJob.ts';
export type { ChangesOptions, JobChange } from './jobControl/jobChanges.ts';
export type { JobFilter } from './jobControl/jobFilter.ts';
export { JOB_STATES, type JobState } from './jobControl/jobState.ts';
export type { JobList, JobPage, JobSummary } from './jobControl/listJobs.ts';
export type { JobSearch, JobSearchResult } from './jobControl/searchJobs.ts';
export type { WaitOptions } from './jobControl/waitForJob.ts';
export { Maintenance, type MaintenanceCounts, type MaintenancePass } from './maintenance/Maintenance.ts';
export type { MaintenanceHealth, TaskHealth } from './maintenance/maintenanceHealth.ts';
export type { MaintenanceOptions } from './maintenance/maintenanceOptions.ts';
export { SluiceMetrics } from './metrics/SluiceMetrics.ts';
export type { AttemptError } from './model/attemptError.ts';
export {
  type Delivery,
  defineJob,
  type JobDefinition,
  type JobFields,
  jobOf,
  type PayloadOf,
} from './model/defineJob.ts';
export type {
  Backoff,
  GroupLimitsSpec,
  Job,
  JobContext,
  JobSpec,
  ParentRef,
  ParentResult,
  StoredBackoff,
} from './model/job.ts';
export type { JobLogLine } from './model/jobLogLine.ts';
export type { SluiceOptions } from './options.ts';
export type { FlowHold } from './queues/flowHold.ts';
export type { QueueHold } from './queues/queueHold.ts';
export { createSluice, Sluice } from './Sluice.ts';
export type { ScheduleInfo } from './scheduler/listSchedules.ts';
export { type Stoppable, stopOnSignals } from './shutdown.ts';
export { JobSnoozedError, RateLimitedError, type RateLimitedOptions } from './snoozeErrors.ts';
export type { SkippedRelease } from './task/MaintenanceTask.ts';
export type { LoadReading } from './worker/hostLoad.ts';
export type { JobUnknownToWorkers } from './worker/jobsUnknownToWorkers.ts';
export type { HistogramCounts, JobNameMetrics, QueueMetrics, WorkerMetrics } from './worker/metricsSnapshot.ts';
export { Worker } from './worker/Worker.ts';
export type { ClaimStrategy, WorkerOptions } from './worker/workerOptions.ts';
export type { WorkerInfo } from './worker/workerRegistry.ts';
