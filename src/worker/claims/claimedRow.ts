import type { Tables } from '../../db/tables.ts';
import { JOB_ROW_COLUMNS, type JobRow } from '../../model/job.ts';
import { JOB_FLAGS } from '../../model/jobFlags.ts';

/**
 * The term a claim's read of its rows adds to JOB_ROW_COLUMNS: how long each job had been due
 * when it was claimed (ms), from run_at — its enqueue, its runAt, or its retry's time — to
 * `claimedAt` (locked_at, or NOW(3) inside the claiming transaction): both on the database clock.
 */
export const waitedMsColumn = (claimedAt: string) =>
  `TIMESTAMPDIFF(MICROSECOND, run_at, ${claimedAt}) DIV 1000 AS waited_ms`;

/**
 * What a claim's read of its rows selects from (with the aliases CLAIMED_COLUMNS names): each job,
 * and its payload stored apart when its row holds '' — read by primary key in the same statement.
 * job_payloads has no other column of jobs' names, so the reads' WHERE and ORDER BY stay unqualified.
 */
export const claimedFrom = (t: Tables) =>
  `${t.jobs} j\nLEFT JOIN ${t.jobPayloads} p ON p.job_id = j.id AND j.payload = ''`;

/**
 * JOB_ROW_COLUMNS over claimedFrom: the payload wherever it is stored (a row written before
 * job_payloads existed holds its own), payload_apart, which tells the completion to delete it, and
 * the group, which a fair share's worker settles after its completion.
 *
 * The payload comes as bytes (the tables' utf8mb4, so UTF-8): mysql2 hands them over as a Buffer,
 * outside the JavaScript heap, and the job parses them when it starts (RunningJob.openPayload). Read
 * as text, each payload was a string on the heap from the claim to its job's start, copied by every
 * young-generation collection on the way: with 0–16 KiB payloads at concurrency 500, 330 of 580 MB
 * allocated per 20,000 jobs were promoted to the old generation, against 40 as bytes.
 */
export const CLAIMED_COLUMNS = [
  ...JOB_ROW_COLUMNS.split(', ').map((c) =>
    c === 'payload' ? 'CAST(COALESCE(p.payload, j.payload) AS BINARY) AS payload' : `j.${c}`,
  ),
  "j.payload = '' AS payload_apart",
  'j.group_key',
].join(', ');

/** A row as a claim returns it: the job, how long it had been due (waitedMsColumn), whether its payload is stored apart, its group. */
export type ClaimedRow = JobRow & {
  readonly waited_ms?: number | string | null;
  readonly payload_apart?: number | string | null;
  readonly group_key?: string | null;
};

/** The group of a fair queue the claimed job counts in (flag fairShare), or null. */
export function fairGroupOf(row: ClaimedRow): string | null {
  return (Number(row.flags ?? 0) & JOB_FLAGS.fairShare) !== 0 ? (row.group_key ?? null) : null;
}

/** True when the claimed row's payload was read from job_payloads (its completion deletes it there). */
export function payloadApartOf(row: ClaimedRow): boolean {
  return Number(row.payload_apart ?? 0) === 1;
}

/** What the metrics count of a claimed row: its name, and how long it had been due (never below 0). */
export function claimedJob(row: ClaimedRow): { name: string; waitedMs: number | null } {
  const waited = row.waited_ms;
  return { name: row.name, waitedMs: waited === null || waited === undefined ? null : Math.max(0, Number(waited)) };
}
