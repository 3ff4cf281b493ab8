import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/**
 * Where a job is in its life, as `sluice.jobs.get/list` report it. A job lives in one of three
 * tables at a time and only moves forward (a re-driven dead job is a new job, with a new id):
 *
 *  enqueue ─▶ delayed ──(due, or runNow)──▶ waiting ──────────────(claimed)──────────────▶ running ──(handler ok)──▶ completed
 *     │                                       ▲ ▲ ▲                                         │ │ │
 *     └─────────────(due at once)─────────────┘ │ └─────────────(stop releases)─────────────┘ │ └─(retries out, or permanent)─▶ dead
 *                                               │                                             │
 *                                               └(backoff over, retryNow)─ retrying ◀─(fails)─┘
 *
 *  cancel:  delayed │ held │ waiting │ retrying │ running  ──▶ cancelled
 *
 *  enqueue with parents ─▶ held ──(its last parent finished: released)──▶ waiting (or delayed)
 *                           └─(a parent died or was cancelled, without continueOnFailure)─▶ cancelled
 *
 * - jobs (live): running = claimed (lock_id set); a free job is waiting when due (run_at <=
 *   NOW(3), on the DB clock), else retrying when it failed before (waiting out its backoff), else
 *   delayed. A claim the sweeper takes back counts as a failure but stays due: waiting. A held job
 *   (run_at = HELD_RUN_AT, a row in job_holds says why: its parents) is held, never delayed.
 * - job_history: completed or cancelled, with the handler's result (for historyRetentionMs).
 * - dead_jobs: dead (out of retries, or failed permanently; for deadRetentionMs).
 */
export const JOB_STATES = [
  'waiting',
  'delayed',
  'held',
  'retrying',
  'running',
  'completed',
  'cancelled',
  'dead',
] as const;

export type JobState = (typeof JOB_STATES)[number];

/** The states of rows in the live jobs table. */
export const LIVE_STATES: readonly JobState[] = ['waiting', 'delayed', 'held', 'retrying', 'running'];

/** The table a state lives in. */
export function tableOfState(state: JobState): 'jobs' | 'history' | 'dead' {
  if (state === 'completed' || state === 'cancelled') return 'history';
  if (state === 'dead') return 'dead';
  return 'jobs';
}

/** SQL: the state of a live row, from its own columns (prefixed by `alias.`) on the DB clock. */
export function liveStateSql(alias: string): string {
  const a = `${alias}.`;
  return `CASE WHEN ${a}lock_id <> '' THEN 'running' WHEN ${a}run_at <= NOW(3) THEN 'waiting' WHEN ${a}run_at = '${HELD_RUN_AT}' THEN 'held' WHEN ${a}retry_times > 0 THEN 'retrying' ELSE 'delayed' END`;
}
