import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { OptionsError } from '../errors.ts';
import { leaveGroups } from '../groups/leaveGroups.ts';
import { HISTORY_FROM_LIVE, HISTORY_INSERT_COLUMNS } from '../history/historyColumns.ts';
import { expireIdempotencyKeys } from '../idempotency/expireIdempotencyKeys.ts';
import { integerIn } from '../options.ts';
import type { PayloadRedactor } from '../payloadRedactor.ts';
import { redactCopied } from '../redactPayload.ts';
import { leaveGraph } from '../workflows/leaveGraph.ts';
import { type JobFilter, validateJobFilter } from './jobFilter.ts';
import { type JobState, LIVE_STATES, liveStateSql } from './jobState.ts';
import { listJobs } from './listJobs.ts';

/**
 * Params: ?1 ids (list), ?2 states (list). Locks the live jobs among those ids that are in one of
 * the states, in ascending id order (the order every multi-row write to jobs takes). Returns each
 * one's batch, whether it carries an idempotency key, its flags (a workflow's job, a group's) and group.
 */
const sqlLock = (t: Tables) => `
SELECT j.id, j.batch_id, j.idempotency_key IS NOT NULL AS keyed, j.flags, j.queue, j.group_key
FROM ${t.jobs} j
WHERE j.id IN (?)
  AND ${liveStateSql('j')} IN (?)
ORDER BY j.id
FOR UPDATE`;

/**
 * Params: ?1 ids (list, locked). Copies them into job_history as cancelled (their last error
 * kept; a running one's claim time as started_at).
 */
const sqlCopyToHistory = (t: Tables) => `
INSERT INTO ${t.jobHistory} (${HISTORY_INSERT_COLUMNS})
SELECT ${HISTORY_FROM_LIVE}, 'cancelled', NULL
FROM ${t.jobs} j
WHERE j.id IN (?)
ON DUPLICATE KEY UPDATE retry_times = j.retry_times, last_error = j.last_error, finished_at = NOW(3),
  outcome = 'cancelled', result = NULL`;

/** Params: ?1 ids (list, locked). affectedRows = jobs removed. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE id IN (?)`;

/** Params: ?1 reason, ?2 ids (list). Why dependents are cancelled (a parent died or was cancelled): kept with their history rows. */
const sqlGiveReason = (t: Tables) => `
UPDATE ${t.jobs}
SET last_error = ?
WHERE id IN (?)`;

/** Params: ?1 ids (list, locked). Without history, their payloads stored apart go with them. */
const sqlDeletePayloads = (t: Tables) => `
DELETE FROM ${t.jobPayloads}
WHERE job_id IN (?)`;

/** Params: ?1 count, ?2 batch id. Counts cancelled jobs on their batch (getBatch, finishBatches read it). */
const sqlCountOnBatch = (t: Tables) => `
UPDATE ${t.batches}
SET cancelled = cancelled + ?
WHERE id = ?`;

/**
 * Most dependents one transaction cancels, over at most CASCADE_LEVELS levels below the jobs it
 * was asked to remove: a level costs about 10 statements (and one per job with children), so a
 * transaction of a cascade sends at most about 10 × CASCADE_LEVELS statements plus one per job.
 */
export const CASCADE_JOBS = 500;
export const CASCADE_LEVELS = 12;

/**
 * What one transaction may still cancel of a cascade, and the dependents it had to leave: each is
 * held, its edge from the failed parent recorded (so it can never be released), and is cancelled
 * by a follow-up transaction (cancelLeftOver) or, failing that, by reconcileHolds.
 */
export interface CascadeBudget {
  jobs: number;
  levels: number;
  /** Dependents left for the next transaction, each with the reason it is cancelled. */
  readonly left: Map<number, string>;
}

/** A fresh budget: make one inside each transaction's body (a re-run starts it again). */
export function cascadeBudget(): CascadeBudget {
  return { jobs: CASCADE_JOBS, levels: CASCADE_LEVELS, left: new Map() };
}

export interface CancelOptions {
  /** Keep the cancelled jobs in job_history (historyRetentionMs > 0). */
  readonly history: boolean;
  /** A cancelled job's idempotency key keeps refusing duplicates this long (it finished). */
  readonly keyRetentionMs: number;
  /** Only jobs in these live states. @defaultValue all: waiting, delayed, retrying, running */
  readonly states?: readonly JobState[];
  /** The install's redactPayload hook: what the history rows keep of each payload. */
  readonly redact?: PayloadRedactor | null;
  /** Collects the queues of workflow children a cancel released (continueOnFailure): whom to wake after the commit. */
  readonly released?: Map<string, number>;
}

/**
 * Cancels live jobs by id, in one short transaction (re-run whole by withTransaction after a
 * transient conflict): lock them, copy them to job_history as cancelled, delete them, count them
 * on their batches, start their keys' retention, settle their places in workflows (the jobs that
 * depend on them are cancelled too, unless they continue on failure: as many as a CascadeBudget
 * allows in the same transaction, the rest in bounded follow-up transactions, cancelLeftOver).
 * Returns the ids cancelled, dependents included (the others were not live, or not in `states`).
 *
 * Why a cancel is a move and not a request the worker would act on: the moment it commits, the
 * job is cancelled for everyone — no worker can claim it again, no sweeper can hand it out again,
 * and every fenced write of the worker running it (extend, complete, retry, dead-letter) matches
 * nothing. That worker's next heartbeat extend finds the claim gone (which it already checks, at
 * no extra cost), reads job_history once to see it was cancelled rather than swept, and aborts the
 * handler's signal with JobCancelledError: within one heartbeat, and no table of requests for
 * every beat to read. A cancel that meets an exactly-once completion in flight waits for its
 * row lock and then finds the job finished (not cancelled); one that commits first makes that
 * completion's fenced delete match nothing, which rolls the handler's transaction back.
 * Without history (historyRetentionMs 0) nothing is kept: a running job's worker then sees a lost
 * claim (it stops all the same, and the job never runs again).
 */
export async function cancelJobs(
  db: Executor,
  tables: Tables,
  ids: readonly number[],
  options: CancelOptions,
): Promise<number[]> {
  if (ids.length === 0) return [];
  const states = options.states ?? LIVE_STATES;
  const first = await withTransaction(db, async (tx) => {
    const budget = cascadeBudget();
    return { cancelled: await cancelLocked(tx, tables, ids, states, options, budget), left: budget.left };
  });
  if (first.left.size === 0) return first.cancelled;
  const rest = await cancelLeftOver(db, tables, first.left, options);
  return [...first.cancelled, ...rest.cancelled];
}

/**
 * Cancels the dependents a bounded cascade left (`left`, emptied as it goes), in follow-up
 * transactions each bounded like the first (up to CASCADE_JOBS of them, and CASCADE_LEVELS levels
 * below), at most `maxTransactions`: what is still left then stays held and doomed, for
 * reconcileHolds. A chain of depth D takes about D / CASCADE_LEVELS transactions.
 */
export async function cancelLeftOver(
  db: Executor,
  tables: Tables,
  left: Map<number, string>,
  options: CancelOptions,
  maxTransactions = Number.POSITIVE_INFINITY,
): Promise<{ cancelled: number[]; transactions: number }> {
  const cancelled: number[] = [];
  let transactions = 0;
  while (left.size > 0 && transactions < maxTransactions) {
    const slice = new Map([...left].slice(0, CASCADE_JOBS));
    const step = await withTransaction(db, async (tx) => {
      const budget = cascadeBudget();
      return { cancelled: await cancelDependents(tx, tables, slice, options, budget), left: budget.left };
    });
    transactions++;
    for (const id of slice.keys()) left.delete(id);
    for (const [id, reason] of step.left) left.set(id, reason);
    cancelled.push(...step.cancelled);
  }
  return { cancelled, transactions };
}

/** The body of cancelJobs' transaction; the jobs that depend on those cancelled are cancelled in turn, in it, within `budget`. */
async function cancelLocked(
  tx: Executor,
  tables: Tables,
  ids: readonly number[],
  states: readonly JobState[],
  options: CancelOptions,
  budget: CascadeBudget,
): Promise<number[]> {
  const locked = await tx.select<{
    id: number | string;
    batch_id: number | string | null;
    keyed: number;
    flags: number;
    queue: string;
    group_key: string | null;
  }>(sqlLock(tables), [ids, states]);
  if (locked.length === 0) return [];
  const lockedIds = locked.map((r) => Number(r.id));
  if (options.history) {
    await tx.write(sqlCopyToHistory(tables), [lockedIds]);
    await redactCopied(tx, tables, 'history', lockedIds, options.redact ?? null);
  } else await tx.write(sqlDeletePayloads(tables), [lockedIds]);
  await tx.write(sqlDelete(tables), [lockedIds]);
  const perBatch = new Map<number, number>();
  for (const r of locked)
    if (r.batch_id !== null) perBatch.set(Number(r.batch_id), (perBatch.get(Number(r.batch_id)) ?? 0) + 1);
  for (const [batchId, count] of perBatch) await tx.write(sqlCountOnBatch(tables), [count, batchId]);
  const keyed = locked.filter((r) => Number(r.keyed) === 1).map((r) => Number(r.id));
  await expireIdempotencyKeys(tx, tables, keyed, options.keyRetentionMs);
  const leaving = locked.map((r) => ({
    id: Number(r.id),
    flags: Number(r.flags),
    queue: r.queue,
    group_key: r.group_key,
    batch_id: r.batch_id,
  }));
  const settled = await leaveGraph(tx, tables, leaving, 'cancelled', options.history);
  for (const [queue, n] of settled.released) options.released?.set(queue, (options.released.get(queue) ?? 0) + n);
  for (const [queue, n] of await leaveGroups(tx, tables, leaving))
    options.released?.set(queue, (options.released.get(queue) ?? 0) + n);
  return [...lockedIds, ...(await cancelDependents(tx, tables, settled.doomed, options, budget))];
}

/**
 * Cancels, inside the caller's transaction, the children a failed parent dooms (settleChildren),
 * each with the reason naming that parent as its last error; and what depends on them, in turn,
 * level by level while `budget` lasts. Those past it go to `budget.left` (still held: their edge
 * from the failed parent is recorded, so nothing releases them). Returns the ids cancelled.
 */
export async function cancelDependents(
  tx: Executor,
  tables: Tables,
  doomed: ReadonlyMap<number, string>,
  options: CancelOptions,
  budget: CascadeBudget = cascadeBudget(),
): Promise<number[]> {
  const now = new Map<number, string>();
  for (const [id, reason] of doomed) {
    if (budget.levels > 0 && now.size < budget.jobs) now.set(id, reason);
    else budget.left.set(id, reason);
  }
  if (now.size === 0) return [];
  budget.levels--;
  budget.jobs -= now.size;
  const byReason = new Map<string, number[]>();
  for (const [id, reason] of now) byReason.set(reason, [...(byReason.get(reason) ?? []), id]);
  for (const [reason, ids] of byReason) await tx.write(sqlGiveReason(tables), [`cancelled: ${reason}`, ids]);
  return cancelLocked(tx, tables, [...now.keys()], LIVE_STATES, options, budget);
}

/**
 * Cancels every live job matching `filter` (queue, name, batch, state, time; an empty filter is
 * refused rather than taken as "everything"), in bounded batches:
 * one listing page, then one cancel transaction, per `batchSize` jobs — never one transaction
 * that grows with the backlog. Returns how many were cancelled.
 */
export async function cancelMatching(
  db: Executor,
  tables: Tables,
  filter: JobFilter,
  options: CancelOptions & { readonly batchSize?: number; readonly onProgress?: (cancelled: number) => void },
): Promise<number> {
  const checked = validateJobFilter(filter);
  if (Object.keys(checked).length === 0) {
    throw new OptionsError(
      'filter',
      'of a cancel names no field: pass ids, or at least one of state, queue, name, batchId, from, to',
    );
  }
  if (checked.state !== undefined && !LIVE_STATES.includes(checked.state)) {
    throw new OptionsError('state', `a cancel applies to live jobs (${LIVE_STATES.join(', ')}), not ${checked.state}`);
  }
  const batchSize = integerIn('batchSize', options.batchSize ?? 500, 1, 1_000);
  const states = checked.state ? [checked.state] : options.states;
  let cancelled = 0;
  let after: string | undefined;
  for (;;) {
    const page = await listJobs(db, tables, checked, { limit: batchSize, after });
    const ids = page.jobs.map((j) => j.id);
    cancelled += (await cancelJobs(db, tables, ids, { ...options, states })).length;
    if (ids.length > 0) options.onProgress?.(cancelled);
    if (page.next === null) return cancelled;
    after = page.next;
  }
}
