import type { Executor } from '../../db/executor.ts';
import { idSet } from '../../db/idSet.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { valuesTable } from '../../db/valuesTable.ts';
import { ClaimLostError } from '../../errors.ts';
import { HISTORY_FROM_LIVE, HISTORY_INSERT_COLUMNS } from '../../history/historyColumns.ts';
import { SETTLED_IN_COMPLETION } from '../../model/jobFlags.ts';
import type { PayloadRedactor } from '../../payloadRedactor.ts';
import { redactCopied } from '../../redactPayload.ts';
import type { JobLogRow } from '../AttemptLog.ts';
import { completeInGraph } from './completeInGraph.ts';
import { writeJobLogs } from './writeJobLogs.ts';

const NONE_RELEASED: ReadonlyMap<string, number> = new Map();

/**
 * Which rows of a claim a completion touches, with its params: the listed ids this claim still
 * holds (?1 lockId, then their idSet), or — when the ids are every job the claim took — all rows that still
 * carry the claim's lock_id (?1 queue, ?2 lockId): one ix_head range instead of a list of ids,
 * which the server parses and turns into ranges in every statement (about 3 µs of server CPU per
 * job each, at 500 ids). The same rows either way: a lock_id is unique to one claim statement.
 */
function heldRows(
  alias: string,
  lockId: string,
  ids: readonly number[],
  wholeClaimOf: string | readonly string[] | undefined,
) {
  // Rows of a workflow or of a limited group (flags set) are left to completeInGraph: see completeJobs.
  // A fair share's row is plain (its group is settled after the commit: FairGroupSettler), as is a
  // rated group's (its start was counted at claim).
  const plain = `\n  AND (${alias}flags & ${SETTLED_IN_COMPLETION}) = 0`;
  if (typeof wholeClaimOf === 'string')
    return { where: `${alias}queue = ?\n  AND ${alias}lock_id = ?${plain}`, params: [wholeClaimOf, lockId] };
  // A claim across queues: one ix_head range per queue (50 at most), not a list of its ids.
  if (wholeClaimOf !== undefined)
    return { where: `${alias}queue IN (?)\n  AND ${alias}lock_id = ?${plain}`, params: [wholeClaimOf, lockId] };
  const listed = idSet(`${alias}id`, ids);
  return { where: `${alias}lock_id = ?\n  AND ${listed.sql}${plain}`, params: [lockId, ...listed.params] };
}

/**
 * Params: heldRows. Deletes the finished jobs this claim still holds. Returns affectedRows =
 * ids.length, or fewer if some claims were lost (those rows are untouched).
 */
const sqlComplete = (t: Tables, held: string) => `
DELETE FROM ${t.jobs}
WHERE ${held}`;

/**
 * Params: heldRows (alias j.). As sqlComplete, with the payloads of those jobs stored apart
 * (job_payloads): without history nothing refers to them once their jobs are gone. One statement,
 * so a payload goes exactly when its job does. Returns affectedRows = jobs + payloads deleted.
 */
const sqlCompleteWithPayloads = (t: Tables, held: string) => `
DELETE j, p
FROM ${t.jobs} j
LEFT JOIN ${t.jobPayloads} p ON p.job_id = j.id AND j.payload = ''
WHERE ${held}`;

/**
 * Params: (job id, result JSON) for each of `results` rows, then heldRows. Copies the
 * finished jobs this claim still holds into job_history as completed, each with its handler's
 * result when it returned one (the results ride in the same statement, as a derived table: no
 * statement more per batch, and none at all when no job returned anything). A job that completes
 * again (after its earlier completion's claim was lost) overwrites its row. The update names the
 * SELECT's own columns (j.retry_times) rather than VALUES(retry_times), which MySQL 8.0.20+
 * deprecates; both servers accept it.
 */
const sqlCopyToHistory = (t: Tables, results: number, held: string) => `
INSERT INTO ${t.jobHistory} (${HISTORY_INSERT_COLUMNS})
SELECT ${HISTORY_FROM_LIVE}, 'completed', ${results > 0 ? 'r.result' : 'NULL'}
FROM ${t.jobs} j${results > 0 ? `\nLEFT JOIN (${valuesTable(['id', 'result'], results)}) r ON r.id = j.id` : ''}
WHERE ${held}
ON DUPLICATE KEY UPDATE retry_times = j.retry_times, last_error = j.last_error, finished_at = NOW(3),
  outcome = 'completed', result = ${results > 0 ? 'r.result' : 'NULL'}`;

export interface CompleteOptions {
  /** Copy the jobs into job_history (historyRetentionMs > 0). */
  readonly history: boolean;
  /** Handler results to keep with the history rows, as JSON text, by job id (jobs without one are absent). */
  readonly results?: ReadonlyMap<number, string>;
  /** The install's redactPayload hook: what the history rows keep of each payload. */
  readonly redact?: PayloadRedactor | null;
  /**
   * The claim's queue (a claim across queues: its queues), when `ids` are every job the claim took
   * (heldRows: the cheaper statements, by ix_head).
   */
  readonly wholeClaimOf?: string | readonly string[];
  /** Log lines the jobs kept with ctx.log and have not written yet (with history only: nothing shows them otherwise). */
  readonly logs?: readonly JobLogRow[];
  /**
   * How many of the jobs have their payload stored apart (job_payloads). Without history their
   * payloads are deleted with them; with history the history rows refer to them and pruning
   * deletes them. @defaultValue 0
   */
  readonly apart?: number;
}

/**
 * Fenced, batched completion: one statement for every finished job of one claim. The statements
 * match only rows with none of the flags SETTLED_IN_COMPLETION (jobs outside any workflow and any
 * group limit: no extra read, no extra statement); a fair share's the caller hands to its
 * FairGroupSettler once this commits.
 * Rows of a workflow — flagged when enqueued, or by an enqueue that named a claimed job as a
 * parent after its worker loaded it — are short in the affected rows, and only then does
 * completeInGraph look them up (still held, flags set) and complete them with their edges, in
 * the same transaction. Returns the queues of the children that released (whom to wake). Without
 * history it is one autocommit DELETE (re-run by the Executor after a transient conflict); with
 * history the copy (results included) and the delete share one short transaction (re-run whole
 * by withTransaction) — one commit, and a history row exists exactly when its job was removed;
 * log lines not yet written go first in that transaction (none, no statement).
 * Inside a caller's transaction (exactly-once) nothing is re-run here. Throws ClaimLostError when
 * some jobs were no longer held: without history the rest are deleted; with history nothing changes.
 */
export async function completeJobs(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: CompleteOptions = { history: false },
): Promise<ReadonlyMap<string, number>> {
  if (!options.history) return deleteFenced(db, tables, lockId, ids, options, options.apart ?? 0);
  const listed = new Set(ids);
  const results = [...(options.results ?? [])].filter(([id]) => listed.has(id));
  const held = heldRows('j.', lockId, ids, options.wholeClaimOf);
  return withTransaction(db, async (tx) => {
    if (options.logs && options.logs.length > 0) await writeJobLogs(tx, tables, lockId, options.logs);
    await tx.write(sqlCopyToHistory(tables, results.length, held.where), [...results.flat(), ...held.params]);
    await redactCopied(tx, tables, 'history', ids, options.redact ?? null);
    return deleteFenced(tx, tables, lockId, ids, options, 0);
  });
}

async function deleteFenced(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: CompleteOptions,
  apart: number,
): Promise<ReadonlyMap<string, number>> {
  const held = heldRows(apart === 0 ? '' : 'j.', lockId, ids, options.wholeClaimOf);
  const sql = apart === 0 ? sqlComplete(tables, held.where) : sqlCompleteWithPayloads(tables, held.where);
  const { affectedRows } = await db.write(sql, held.params);
  const expected = ids.length + apart;
  if (affectedRows === expected) return NONE_RELEASED;
  // Rows the plain statement left: jobs of a workflow (flags set) with their payloads, or lost claims.
  const inGraph = await completeInGraph(db, tables, lockId, ids, { ...options, deletePayloads: apart > 0 });
  const lostRows = expected - affectedRows - inGraph.completed - inGraph.payloadsDeleted;
  // A lost job left its row and, if it had one, its payload's: the count lost is at most lostRows.
  if (lostRows > 0)
    throw new ClaimLostError('complete', lockId, ids, Math.min(ids.length - inGraph.completed, lostRows));
  return inGraph.released;
}
