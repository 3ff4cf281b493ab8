export { createSluice, Sluice } from './Sluice.ts';
export { defineJob } from './defineJob.ts';
export { Worker } from './worker/Worker.ts';
export { Maintainer, type SweepResult } from './maintenance/Maintainer.ts';
export { SluiceMetrics } from './metrics/metricsServer.ts';
export {
  SluiceError,
  JobValidationError,
  OptionsError,
  ClaimLostError,
  SchemaVersionError,
  UnknownJobTypeError,
  HandlerTimeoutError,
  PermanentJobError,
  PermanentJobError as PermanentError,
  JobDefinitionError,
  ConnectionError,
} from './errors.ts';
export type { SluiceEventMap, SluiceEventName, SluiceEvents } from './events.ts';
export type { SluiceOptions, WorkerOptions, MaintenanceOptions, ClaimStrategy } from './options.ts';
export type { JobSpec, Job, JobContext, JobDefinition, Backoff, StoredBackoff, Delivery } from './types.ts';
export type { EnqueueOptions, EnqueueBatchOptions, EnqueueBatchResult } from './enqueue/enqueueBatch.ts';
export type { BatchStatus } from './batches/getBatch.ts';
export type { EnqueueStreamOptions, EnqueueStreamResult } from './enqueue/enqueueStream.ts';
export type { DeadJob } from './deadJobs/listDeadJobs.ts';
export type { DeadJobFilter } from './deadJobs/deadJobFilter.ts';
export type { EnqueueResult } from './enqueue/enqueueJob.ts';
export type { QueueStats } from './stats/queueStats.ts';
export type { WorkerInfo } from './workers/workerRegistry.ts';
export type { LoadReading } from './stats/processStats.ts';
