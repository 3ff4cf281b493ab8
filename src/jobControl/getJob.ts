import { escapeLike } from '../db/escapeLike.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type GroupHold, readGroupHold } from '../groups/readGroupHold.ts';
import type { AttemptError } from '../model/attemptError.ts';
import { claimKeyOf } from '../model/claimKey.ts';
import { shownRunAt } from '../model/heldRunAt.ts';
import type { JobLogLine } from '../model/jobLogLine.ts';
import { shownPayload } from '../model/storedPayload.ts';
import { type FlowHold, flowHold } from '../queues/flowHold.ts';
import { type QueueHold, type QueueHoldColumns, queueHold, queueHoldColumns } from '../queues/queueHold.ts';
import { type JobWorkflow, readWorkflow } from '../workflows/readWorkflow.ts';
import { type JobState, liveStateSql } from './jobState.ts';
import { listAttemptErrors } from './listAttemptErrors.ts';
import { listJobLogs } from './listJobLogs.ts';
import { parseJson } from './parseJson.ts';

/**
 * Params: ?1 id (×3). The job wherever it is: one primary-key lookup in each of jobs, job_history
 * and dead_jobs, in one statement — so one snapshot (READ COMMITTED reads per statement): a job
 * that moves between the tables meanwhile is seen in exactly one of them. Its payload stored apart
 * (the row holds '') joins by primary key (apart_payload), as does its progress row
 * by primary key; whether it has attempt errors and log lines is one probe each of job_errors'
 * and job_logs' primary keys (they are read only then), whether it is part of a workflow one
 * probe of each of job_edges' keys (its edges are read only then); its queue's row joins by primary
 * key (what may hold a waiting job back: queueHold). At most one row comes back.
 */
const sqlGet = (t: Tables) => `
SELECT x.*, jp.payload AS apart_payload, p.progress, p.updated_at AS progress_at,
       EXISTS (SELECT 1 FROM ${t.jobErrors} e WHERE e.job_id = x.id) AS has_errors,
       EXISTS (SELECT 1 FROM ${t.jobLogs} l WHERE l.job_id = x.id) AS has_logs,
       EXISTS (SELECT 1 FROM ${t.jobEdges} ep WHERE ep.parent_id = x.id)
         OR EXISTS (SELECT 1 FROM ${t.jobEdges} ec WHERE ec.child_id = x.id)
         OR EXISTS (SELECT 1 FROM ${t.jobGraphHistory} kc WHERE kc.child_id = x.id)
         OR EXISTS (SELECT 1 FROM ${t.jobGraphHistory} kp WHERE kp.parent_id = x.id) AS in_workflow,
       ${queueHoldColumns('q')}
FROM (
  SELECT ${liveStateSql('j')} AS state, j.id, j.queue, j.name, j.payload, j.priority, j.run_at,
         j.lock_id, IF(j.lock_id = '', NULL, j.locked_at) AS locked_at, j.retry_times, j.max_retries,
         j.batch_id, j.idempotency_key, j.last_error, j.created_at, j.updated_at, j.group_key,
         IF(j.lock_id = '' OR j.claimed_at <= '1970-01-01 00:00:01', NULL, j.claimed_at) AS started_at,
         NULL AS finished_at, NULL AS result, NULL AS redriven_as
  FROM ${t.jobs} j
  WHERE j.id = ?
  UNION ALL
  SELECT h.outcome, h.job_id, h.queue, h.name, h.payload, h.priority, NULL,
         NULL, NULL, h.retry_times, h.max_retries,
         h.batch_id, h.idempotency_key, h.last_error, h.created_at, h.finished_at, NULL,
         h.started_at, h.finished_at, h.result, h.retried_as
  FROM ${t.jobHistory} h
  WHERE h.job_id = ?
  UNION ALL
  SELECT 'dead', d.id, d.queue, d.name, d.payload, d.priority, NULL,
         NULL, NULL, d.retry_times, d.max_retries,
         d.batch_id, d.idempotency_key, d.last_error, d.created_at, COALESCE(d.redriven_at, d.failed_at), NULL,
         NULL, d.failed_at, NULL, d.redriven_as
  FROM ${t.deadJobs} d
  WHERE d.id = ?
) x
LEFT JOIN ${t.jobPayloads} jp ON jp.job_id = x.id AND x.payload = ''
LEFT JOIN ${t.jobProgress} p ON p.job_id = x.id
LEFT JOIN ${t.queues} q ON q.queue = x.queue`;

/**
 * Params: ?1 LIKE pattern `%~<claim key>`. The registry row of the worker a claim key names (its
 * id ends with the key: ClaimTokens). The registry holds one row per live worker: a short scan.
 */
const sqlHolder = (t: Tables) => `
SELECT id, host, pid, heartbeat_at
FROM ${t.workers}
WHERE id LIKE ?
LIMIT 1`;

/** Who holds a running job's claim, and since when. */
export interface JobLock {
  readonly lockId: string;
  /** When the claim was taken or last extended by a heartbeat (DB clock). */
  readonly lockedAt: Date;
  /** The holder's registry row (its id ends with the lock_id's claim key); null when it has none (dead, or just removed). */
  readonly workerId: string | null;
  readonly host: string | null;
  readonly pid: number | null;
  /** The holder's last registry heartbeat; null when it has no registry row (dead, or just removed). */
  readonly heartbeatAt: Date | null;
}

/** Everything known about one job. */
export interface JobInfo {
  readonly id: number;
  readonly state: JobState;
  readonly queue: string;
  readonly name: string;
  /** The payload as enqueued (stored text that is not JSON comes as it is); null when it was refused (payloadRefused). */
  readonly payload: unknown;
  /**
   * Why the stored payload was not read — "payload refused: …" (PayloadRefusedError): not what
   * sluice writes, or past the size of any payload — or null when it was read. A worker
   * dead-letters such a job without running it.
   */
  readonly payloadRefused: string | null;
  readonly priority: number;
  /** Failed attempts so far (handler failures and expired claims). */
  readonly retryTimes: number;
  /** The job's own retry limit; null: its definition's (or the worker's default). */
  readonly maxRetries: number | null;
  /** Not before (live jobs only); null for a held job (`workflow.held.runAt` is the one it gets back once released). */
  readonly runAt: Date | null;
  /** The claim of a running job. */
  readonly lock: JobLock | null;
  /** The last failure (message and stack), if any attempt failed. */
  readonly lastError: string | null;
  /**
   * The errors of its latest failed attempts (keptAttempts, 10 by default), newest first: attempt
   * number, time, worker, message, code and stack. A claim the maintenance process took back counts
   * as a failed attempt (code SLUICE_WORKER_DIED or SLUICE_CLAIM_EXPIRED).
   */
  readonly errors: readonly AttemptError[];
  /** The lines its handler kept with ctx.log (its latest keptAttempts attempts), oldest first. */
  readonly logs: readonly JobLogLine[];
  /** Lines its attempts logged past their caps (maxLogLines, maxLogBytes) and did not keep. */
  readonly logsDropped: number;
  /** The last value the handler reported with ctx.progress, and when it was written. */
  readonly progress: { readonly value: unknown; readonly at: Date } | null;
  /** What the handler returned (completed jobs; undefined when it returned nothing or it was not kept). */
  readonly result: unknown;
  readonly batchId: number | null;
  readonly idempotencyKey: string | null;
  readonly createdAt: Date;
  /** Last change of the row: a claim, a heartbeat, a retry, the finish. */
  readonly updatedAt: Date;
  /**
   * Running, completed or cancelled jobs: when the last (or current) attempt was claimed, on the DB
   * clock (null if it never ran; a running job claimed by a worker of an earlier version: null).
   */
  readonly startedAt: Date | null;
  /** Completed, cancelled: when; dead: when it died. */
  readonly finishedAt: Date | null;
  /** A dead job re-driven, or a completed or cancelled one retried (jobs.retry): the new job that re-runs it. */
  readonly redrivenAs: number | null;
  /**
   * Its place in a workflow — its parents (and how each ended), its live children, and for a held
   * job what it waits for and the run_at it gets back (its own runAt shows the held sentinel,
   * 9999-12-31) — or null outside any workflow.
   */
  readonly workflow: JobWorkflow | null;
  /**
   * A waiting job that its queue holds back now (paused, paused until a time, at its cap, or its
   * rate window used up), with why and until when if known; null when nothing of its queue does.
   */
  readonly queueHold: QueueHold | null;
  /** A live job's group (JobSpec.group); null without one, and once the job has left the live table. */
  readonly group: string | null;
  /** A job held back by its group's limit (state 'held'): the group, its limit in force, its slots taken; else null. */
  readonly groupHold: GroupHold | null;
  /**
   * A job not yet due whose start flow control set: its group's rate reserved it ("rate limited:
   * group G, reserved start T"), its group is paused, or it is debounced (key K, until T).
   */
  readonly flowHold: FlowHold | null;
}

interface GetRow extends QueueHoldColumns {
  state: JobState;
  id: number | string;
  queue: string;
  name: string;
  payload: string;
  apart_payload: string | null;
  priority: number;
  run_at: Date | null;
  lock_id: string | null;
  locked_at: Date | null;
  retry_times: number;
  max_retries: number | null;
  batch_id: number | string | null;
  idempotency_key: string | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  group_key: string | null;
  started_at: Date | null;
  finished_at: Date | null;
  result: string | null;
  redriven_as: number | string | null;
  progress: string | null;
  progress_at: Date | null;
  has_errors: number;
  has_logs: number;
  in_workflow: number;
}

/** The job with this id, wherever it is (live, history, dead), or null. */
export async function getJob(db: Executor, tables: Tables, id: number): Promise<JobInfo | null> {
  const [row] = await db.select<GetRow>(sqlGet(tables), [id, id, id]);
  if (!row) return null;
  const errors = Number(row.has_errors) ? await listAttemptErrors(db, tables, id) : [];
  const logs = Number(row.has_logs) ? await listJobLogs(db, tables, id) : { lines: [], dropped: 0 };
  const shown =
    row.apart_payload === null ? shownPayload(row.payload, 'row') : shownPayload(row.apart_payload, 'apart');
  return {
    id: Number(row.id),
    state: row.state,
    queue: row.queue,
    name: row.name,
    payload: shown.payload,
    payloadRefused: shown.refused,
    priority: row.priority,
    retryTimes: row.retry_times,
    maxRetries: row.max_retries,
    runAt: shownRunAt(row.run_at),
    lock: row.lock_id && row.locked_at ? await lockOf(db, tables, row.lock_id, row.locked_at) : null,
    lastError: row.last_error,
    errors,
    logs: logs.lines,
    logsDropped: logs.dropped,
    progress:
      row.progress === null || !row.progress_at ? null : { value: parseJson(row.progress), at: row.progress_at },
    result: row.result === null ? undefined : parseJson(row.result),
    batchId: row.batch_id === null ? null : Number(row.batch_id),
    idempotencyKey: row.idempotency_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
    redrivenAs: row.redriven_as === null ? null : Number(row.redriven_as),
    workflow: Number(row.in_workflow) ? await readWorkflow(db, tables, id) : null,
    queueHold: row.state === 'waiting' ? await queueHold(db, tables, row.queue, row) : null,
    group: row.group_key,
    groupHold: row.state === 'held' && row.group_key !== null ? await readGroupHold(db, tables, id) : null,
    flowHold:
      (row.state === 'delayed' || row.state === 'retrying') && row.run_at !== null
        ? await flowHold(db, tables, { id, queue: row.queue, group: row.group_key, runAt: row.run_at })
        : null,
  };
}

async function lockOf(db: Executor, tables: Tables, lockId: string, lockedAt: Date): Promise<JobLock> {
  const [holder] = await db.select<{ id: string; host: string; pid: number; heartbeat_at: Date }>(sqlHolder(tables), [
    `%~${escapeLike(claimKeyOf(lockId))}`,
  ]);
  return {
    lockId,
    lockedAt,
    workerId: holder?.id ?? null,
    host: holder?.host ?? null,
    pid: holder ? Number(holder.pid) : null,
    heartbeatAt: holder?.heartbeat_at ?? null,
  };
}
