import type { JobRow } from '../../model/job.ts';

/**
 * The term a claim's read of its rows adds to JOB_ROW_COLUMNS: how long each job had been due
 * when it was claimed (ms), from run_at — its enqueue, its runAt, or its retry's time — to
 * `claimedAt` (locked_at, or NOW(3) inside the claiming transaction): both on the database clock.
 */
export const waitedMsColumn = (claimedAt: string) =>
  `TIMESTAMPDIFF(MICROSECOND, run_at, ${claimedAt}) DIV 1000 AS waited_ms`;

/** A row as a claim returns it: the job, and how long it had been due (waitedMsColumn). */
export type ClaimedRow = JobRow & { readonly waited_ms?: number | string | null };

/** What the metrics count of a claimed row: its name, and how long it had been due (never below 0). */
export function claimedJob(row: ClaimedRow): { name: string; waitedMs: number | null } {
  const waited = row.waited_ms;
  return { name: row.name, waitedMs: waited === null || waited === undefined ? null : Math.max(0, Number(waited)) };
}
