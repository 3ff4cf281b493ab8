import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 the INSERT's first id, ?2 batch id, ?3 its rows. Records the grouped jobs one INSERT
 * of a batch wrote as members of their groups: a primary-key range read from that INSERT's first id
 * (the batch's later chunks are not written yet), inside the enqueue's transaction.
 */
const sqlBatchMembers = (t: Tables) => `
INSERT INTO ${t.jobGroupMembers} (queue, group_key, job_id)
SELECT queue, group_key, id
FROM ${t.jobs}
WHERE id >= ?
  AND batch_id = ?
  AND group_key IS NOT NULL
ORDER BY id
LIMIT ?`;

/** Params: ?1 queue, ?2 group, ?3 job id. One enqueued job's membership. */
const sqlMember = (t: Tables) => `
INSERT INTO ${t.jobGroupMembers} (queue, group_key, job_id)
VALUES (?, ?, ?)`;

/** After one INSERT of a batch whose rows name groups: records them. */
export async function writeBatchMembers(
  tx: Executor,
  tables: Tables,
  firstId: number,
  batchId: number,
  rows: number,
): Promise<void> {
  await tx.write(sqlBatchMembers(tables), [firstId, batchId, rows]);
}

/** After a single enqueue's INSERT of a job with a group. */
export async function writeMember(
  tx: Executor,
  tables: Tables,
  queue: string,
  group: string,
  jobId: number,
): Promise<void> {
  await tx.write(sqlMember(tables), [queue, group, jobId]);
}
