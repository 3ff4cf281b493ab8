import { escape as sqlLiteral } from 'mysql2';
import type { Executor } from '../db/executor.ts';
import { planCountedChunks, type ServerChunkLimits } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import type { NormalizedJob } from '../model/validateJob.ts';

/** Live parents named by id are locked and flagged in pages of this many (bounded statements). */
const PARENT_PAGE = 1_000;

/**
 * Params: ?1 ids (list). Locks the live jobs among them, in id order (the order every multi-row
 * write to jobs takes). Returns their ids: a parent missing from the result has finished, died or
 * never existed. The lock holds until the batch commits: the parent cannot finish meanwhile, so
 * when it does, it sees the flag set below and the edges written with the batch.
 */
const sqlLockParents = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
ORDER BY id
FOR UPDATE`;

/**
 * Params: ?1 ids (list, locked above). Sets "has dependents" on live parents. Returns affectedRows
 * = the ids (matched rows). A worker that claimed such a parent before loaded flags without the bit;
 * its completion excludes flagged rows and so finds this one by the mismatch (completeJobs).
 */
const sqlFlagParents = (t: Tables) => `
UPDATE ${t.jobs}
SET flags = flags | ${JOB_FLAGS.hasDependents}
WHERE id IN (?)`;

/** Params: none (values rendered). `INSERT … VALUES (parent_id, child_id, continue_on_failure), …`. */
const sqlInsertEdges = (t: Tables) => `INSERT INTO ${t.jobEdges} (parent_id, child_id, continue_on_failure) VALUES `;

/** Params: none (values rendered). `INSERT … VALUES (job_id, 'parents', intended run_at, waiting parents), …`. */
const sqlInsertHolds = (t: Tables) => `INSERT INTO ${t.jobHolds} (job_id, reason, run_at, waiting_parents) VALUES `;

/**
 * Locks the live jobs a batch names as parents by id and sets their "has dependents" bit; throws
 * JobValidationError naming the first job that names one no longer live (nothing of the batch is
 * written: this runs first in its transaction).
 */
export async function lockLiveParents(
  tx: Executor,
  tables: Tables,
  parents: ReadonlyMap<number, number>,
): Promise<void> {
  const ids = [...parents.keys()].sort((a, b) => a - b);
  for (let start = 0; start < ids.length; start += PARENT_PAGE) {
    const page = ids.slice(start, start + PARENT_PAGE);
    const live = new Set(
      (await tx.select<{ id: number | string }>(sqlLockParents(tables), [page])).map((r) => Number(r.id)),
    );
    const gone = page.find((id) => !live.has(id));
    if (gone !== undefined) {
      throw new JobValidationError(
        parents.get(gone) as number,
        'parents',
        `names job ${gone}, which is not live (it finished, died, was cancelled or never existed)`,
      );
    }
    await tx.write(sqlFlagParents(tables), [page]);
  }
}

export interface GraphRows {
  /** [parent id, child id, continue on failure] for every dependency of the batch. */
  readonly edges: readonly (readonly [number, number, boolean])[];
  /** The held children: id, the job as validated (its intended run_at), and how many parents it waits for. */
  readonly holds: readonly { readonly id: number; readonly job: NormalizedJob; readonly waiting: number }[];
}

/** Writes a batch's edges and its children's hold rows, in multi-row INSERTs within the server's limits. */
export async function writeGraphRows(
  tx: Executor,
  tables: Tables,
  rows: GraphRows,
  limits: ServerChunkLimits,
): Promise<void> {
  const edges = rows.edges.map(([parent, child, cof]) => `(${parent},${child},${cof ? 1 : 0})`);
  for (const chunk of planCountedChunks(sqlInsertEdges(tables), edges, limits)) await insertAll(tx, chunk);
  const holds = rows.holds.map(({ id, job, waiting }) => `(${id},'parents',${intendedRunAt(job)},${waiting})`);
  for (const chunk of planCountedChunks(sqlInsertHolds(tables), holds, limits)) await insertAll(tx, chunk);
}

async function insertAll(tx: Executor, chunk: { sql: string; rows: number }): Promise<void> {
  const { affectedRows } = await tx.write(chunk.sql);
  if (affectedRows !== chunk.rows) throw new Error(`a workflow INSERT wrote ${affectedRows} of ${chunk.rows} rows`);
}

/** The run_at the job would have had outside a graph, as SQL (the DB clock unless an absolute time was given). */
function intendedRunAt(job: NormalizedJob): string {
  if (job.runAt !== null) return sqlLiteral(job.runAt.toISOString().slice(0, 23).replace('T', ' '));
  return job.delayMs > 0 ? `NOW(3) + INTERVAL ${job.delayMs * 1000} MICROSECOND` : 'NOW(3)';
}
