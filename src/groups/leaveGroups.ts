import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { GROUP_FLAGS } from '../model/jobFlags.ts';
import { type GroupChange, settleGroups } from './settleGroup.ts';

/**
 * Params: ?1 job ids (list). Those of the leaving jobs still held for their group (a cancel of a job
 * that never started): their hold rows, locked by primary key.
 */
const sqlHeldAmong = (t: Tables) => `
SELECT job_id
FROM ${t.jobHolds}
WHERE job_id IN (?)
  AND reason = 'group'
FOR UPDATE`;

/** Params: ?1 job ids (list). Their holds go with them. */
const sqlDropHolds = (t: Tables) => `
DELETE FROM ${t.jobHolds}
WHERE job_id IN (?)`;

/** A job leaving the live table, as the statement that locked it read it. */
export interface LeavingGroupJob {
  readonly id: number;
  readonly flags: number;
  readonly queue: string;
  readonly group_key: string | null;
}

/**
 * What the jobs of limited groups do as they leave the live table (completion, dead-lettering,
 * cancel), inside the transaction that deletes them (a fair share's plain completion does not come
 * here: its worker settles the group after the commit): a job still held drops its hold; a job that
 * held a slot gives it back, and settleGroups passes it to the group's next held job: every group
 * of the jobs in a few statements, in one order (queue, group), so two transactions never lock two
 * group rows crosswise.
 * Jobs with neither group flag cost nothing: no statement. Returns the jobs released per queue
 * (whom to wake after the commit).
 */
export async function leaveGroups(
  tx: Executor,
  tables: Tables,
  jobs: readonly LeavingGroupJob[],
): Promise<Map<string, number>> {
  const grouped = jobs.filter((j) => (j.flags & GROUP_FLAGS) !== 0 && j.group_key !== null);
  if (grouped.length === 0) return new Map();
  const held = new Set(
    (await tx.select<{ job_id: number | string }>(sqlHeldAmong(tables), [grouped.map((j) => j.id)])).map((r) =>
      Number(r.job_id),
    ),
  );
  if (held.size > 0) await tx.write(sqlDropHolds(tables), [[...held]]);
  const freed = new Map<string, GroupChange>();
  for (const job of grouped) {
    if (held.has(job.id)) continue;
    const key = `${job.queue}\u0000${job.group_key}`;
    const entry = freed.get(key);
    freed.set(key, { queue: job.queue, group: job.group_key as string, freed: (entry?.freed ?? 0) + 1, limit: null });
  }
  return settleGroups(tx, tables, [...freed.values()]);
}
