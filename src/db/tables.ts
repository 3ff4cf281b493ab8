import { OptionsError } from '../errors.ts';

/** The table names of one sluice install, all carrying the same configurable prefix. */
export interface Tables {
  readonly prefix: string;
  readonly jobs: string;
  readonly batches: string;
  readonly deadJobs: string;
  readonly leases: string;
  readonly queues: string;
  readonly idempotencyKeys: string;
  readonly workers: string;
  readonly jobHistory: string;
  readonly jobProgress: string;
  readonly jobErrors: string;
  readonly jobLogs: string;
  /** The trace context each traced job was enqueued under (src/tracing/). */
  readonly jobTraces: string;
  /** Payloads stored apart from their job's row (src/model/storedPayload.ts). */
  readonly jobPayloads: string;
  readonly doorbells: string;
  readonly queueDepths: string;
  /** A workflow's dependencies, parent → child (src/workflows/). */
  readonly jobEdges: string;
  /** The edges of a workflow's finished children, kept with the history to draw a finished graph. */
  readonly jobGraphHistory: string;
  /** Why a held-back job (run_at = HELD_RUN_AT) waits, and the run_at it gets back. */
  readonly jobHolds: string;
  /** Each (queue, group) with a limit or jobs to count: the flow control of a group. */
  readonly jobGroups: string;
  /** Each (queue, debounce key) and the job that waits for it (src/enqueue/debounceJob.ts). */
  readonly jobDebounces: string;
  /** The live jobs of each (queue, group), for pausing a group (src/queues/pauseGroupFor.ts). */
  readonly jobGroupMembers: string;
  /** The install's settings every process reads (src/settings/). */
  readonly settings: string;
  /** Run-time schedules, each with its next run indexed (src/scheduler/). */
  readonly schedules: string;
  /** The latest jobs each run-time schedule fired. */
  readonly scheduleRuns: string;
  /** Each maintenance task's last run, as the leader recorded it (src/maintenance/maintenanceHealth.ts). */
  readonly maintenanceTasks: string;
  readonly migrations: string;
  readonly migrationsLock: string;
}

const PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/;

/** Builds the (backtick-quoted) table names for a prefix, rejecting anything that is not a plain identifier. */
export function tablesFor(prefix: string): Tables {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new OptionsError('tablePrefix', `must match ${PREFIX_PATTERN} (got ${JSON.stringify(prefix)})`);
  }
  if (/dead_$/i.test(prefix)) {
    // `app_` + `dead_jobs` and `app_dead_` + `jobs` name one table: two installs would share it.
    throw new OptionsError(
      'tablePrefix',
      `must not end with "dead_" (got ${JSON.stringify(prefix)}): its jobs table would be the dead-jobs table of the prefix before it`,
    );
  }
  return {
    prefix,
    jobs: `\`${prefix}jobs\``,
    batches: `\`${prefix}batches\``,
    deadJobs: `\`${prefix}dead_jobs\``,
    leases: `\`${prefix}leases\``,
    queues: `\`${prefix}queues\``,
    idempotencyKeys: `\`${prefix}idempotency_keys\``,
    workers: `\`${prefix}workers\``,
    jobHistory: `\`${prefix}job_history\``,
    jobProgress: `\`${prefix}job_progress\``,
    jobErrors: `\`${prefix}job_errors\``,
    jobLogs: `\`${prefix}job_logs\``,
    jobTraces: `\`${prefix}job_traces\``,
    jobPayloads: `\`${prefix}job_payloads\``,
    doorbells: `\`${prefix}doorbells\``,
    queueDepths: `\`${prefix}queue_depths\``,
    jobEdges: `\`${prefix}job_edges\``,
    jobGraphHistory: `\`${prefix}job_graph_history\``,
    jobHolds: `\`${prefix}job_holds\``,
    jobGroups: `\`${prefix}job_groups\``,
    jobDebounces: `\`${prefix}job_debounces\``,
    jobGroupMembers: `\`${prefix}job_group_members\``,
    settings: `\`${prefix}settings\``,
    schedules: `\`${prefix}schedules\``,
    scheduleRuns: `\`${prefix}schedule_runs\``,
    maintenanceTasks: `\`${prefix}maintenance_tasks\``,
    migrations: `${prefix}migrations`,
    migrationsLock: `${prefix}migrations_lock`,
  };
}
