/**
 * The run_at of a held-back job: a live row of jobs that must not start yet (its parents have not
 * finished; later, its concurrency key is at its limit). Parked past every real time (validateJob
 * refuses a runAt from 9999-01-01 on), the row lies outside the claim's range of ix_head
 * (`lock_id = '' AND run_at <= NOW(3)`): no claim reads it, and no new claim path is needed. Why it
 * waits, and the run_at it gets back, is its row in job_holds. Everything that reads run_at for a
 * state (jobs.get/list, queue depth, the claim loop's next due time, runNow) must know this value.
 */
export const HELD_RUN_AT = '9999-12-31 23:59:59.000';

/** HELD_RUN_AT's year: no real run_at reaches it (validateJob refuses one from 9999-01-01 on). */
const HELD_YEAR = 9999;

/**
 * Pure: a run_at as the API shows it: null for a held job's parking value, which is no time at
 * which it will run (it gets its run_at back when released), else the time as it is.
 */
export function shownRunAt(runAt: Date | null): Date | null {
  return runAt !== null && runAt.getUTCFullYear() >= HELD_YEAR ? null : runAt;
}
