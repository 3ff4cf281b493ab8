/**
 * `sluice/testing`: helpers for an application's tests, against a real database (docs/testing.md).
 * A separate entry: `import 'sluice'` never loads it.
 */
export { assertEnqueued, refuteEnqueued } from './assertEnqueued.ts';
export { type DrainCounts, type DrainOptions, drainQueues } from './drainQueues.ts';
export {
  type AssertEnqueuedOptions,
  type EnqueuedFilter,
  type EnqueuedJob,
  type EnqueuedOptions,
  enqueuedJobs,
} from './enqueuedJobs.ts';
export { type PerformedJob, type PerformOptions, performJob } from './performJob.ts';
export { createTestInstall, type TestInstall } from './testInstall.ts';
