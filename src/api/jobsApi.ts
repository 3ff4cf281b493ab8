import { purgeDeadJobs } from '../deadJobs/purgeDeadJobs.ts';
import { redriveDeadJobs } from '../deadJobs/redriveDeadJobs.ts';
import { OptionsError } from '../errors.ts';
import { purgeFinishedJobs } from '../history/purgeFinishedJobs.ts';
import { retryFinishedJobs } from '../history/retryFinishedJobs.ts';
import { cancelJobs, cancelMatching } from '../jobControl/cancelJobs.ts';
import { countJobs, type JobCount } from '../jobControl/countJobs.ts';
import { findJobsByKey } from '../jobControl/findJobsByKey.ts';
import { getJob, type JobInfo } from '../jobControl/getJob.ts';
import { type ChangesOptions, type JobChange, jobChanges } from '../jobControl/jobChanges.ts';
import { JOB_FILTER_KEYS, type JobFilter } from '../jobControl/jobFilter.ts';
import { JOB_PAGE_KEYS, type JobList, type JobPage, listJobs } from '../jobControl/listJobs.ts';
import { runJobsNow } from '../jobControl/runJobsNow.ts';
import { JOB_SEARCH_KEYS, type JobSearch, type JobSearchResult, searchJobs } from '../jobControl/searchJobs.ts';
import { type WaitOptions, waitForJob } from '../jobControl/waitForJob.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import { SETTINGS_MAX_AGE_MS } from '../settings/InstallRetention.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import type { Guard } from './Guard.ts';

const COUNT_KEYS = optionKeys<{ max?: number }>({ max: true });
const CANCEL_KEYS = optionKeys<{ batchSize?: number; onProgress?: unknown }>({ batchSize: true, onProgress: true });
const WHEN_KEYS = optionKeys<{ delayMs?: number; runAt?: Date }>({ delayMs: true, runAt: true });
const BY_KEY_KEYS = optionKeys<{ queue?: string }>({ queue: true });
const WAIT_KEYS = optionKeys<WaitOptions>({ timeoutMs: true, maxPollMs: true });
const CHANGES_KEYS = optionKeys<ChangesOptions>({ after: true, since: true, limit: true, settleMs: true });

/** The most ids one retry or purge takes (each runs in short transactions of a few hundred). */
const MAX_IDS = 10_000;

/** A list of job ids, refused at the call unless each is a positive whole number. */
function jobIds(call: string, ids: number | readonly number[]): readonly number[] {
  const list = typeof ids === 'number' ? [ids] : ids;
  if (!Array.isArray(list)) throw new OptionsError(`${call}(ids)`, 'must be a job id or a list of job ids');
  if (list.length > MAX_IDS)
    throw new OptionsError(`${call}(ids)`, `takes at most ${MAX_IDS} ids (got ${list.length})`);
  for (const id of list)
    if (!Number.isSafeInteger(id) || id < 1)
      throw new OptionsError(`${call}(ids)`, `must hold positive whole numbers (got ${JSON.stringify(id)})`);
  return [...new Set(list)];
}

/** Ids cancelled per transaction when a cancel names them. */
const CANCEL_IDS_PER_TRANSACTION = 500;

/**
 * `sluice.jobs`: every job, wherever it is (live, history, dead) — look up, list, count, cancel,
 * run now, wait for. Each call is a few index reads or one short transaction (see the files
 * beside this one); the dashboard and the CLI go through the same calls.
 */
export function jobsApi(runtime: SluiceRuntime, guard: Guard) {
  const { db, tables } = runtime;
  const idList = (ids: number | readonly number[]): readonly number[] => (typeof ids === 'number' ? [ids] : ids);
  /** runJobsNow, then a ring for the workers of the jobs' queues (they may sleep until the old run_at). */
  const moveInTime = async (ids: readonly number[], options?: Parameters<typeof runJobsNow>[3]) => {
    const { changed, queues } = await runJobsNow(db, tables, ids, options);
    ringAfterCommit(runtime, undefined, queues);
    return changed;
  };
  return {
    /** The job with this id in any state, with its payload, claim holder, progress, result, last error; or null. */
    get: (id: number): Promise<JobInfo | null> => guard(() => getJob(db, tables, id)),
    /** One page of jobs (keyset: pass `next` as `after`); without a state, the live jobs. */
    list: (filter?: JobFilter, page?: JobPage): Promise<JobList> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.list(filter)', filter, JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.jobs.list(filter, page)', page, JOB_PAGE_KEYS);
        return listJobs(db, tables, filter, page);
      }),
    /**
     * The ids of the jobs an idempotency key names, by index only: live ones in any queue, and with
     * `queue`, a finished one while its key is kept.
     */
    findByKey: (key: string, options?: { queue?: string }): Promise<number[]> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.findByKey(key, options)', options, BY_KEY_KEYS);
        return findJobsByKey(db, tables, key, options?.queue);
      }),
    /**
     * Jobs of a filter whose payload field (`path`, dotted) equals `equals` as text. No index
     * serves it: each call reads `scan` jobs of the filter (500; at most 1,000) and their payloads
     * up to 64 KiB each, and returns `next` to read on.
     */
    search: (filter: JobFilter, search: JobSearch): Promise<JobSearchResult> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.search(filter)', filter, JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.jobs.search(filter, search)', search, JOB_SEARCH_KEYS);
        return searchJobs(db, tables, filter, search);
      }),
    /**
     * How many jobs match, reading at most `max` index entries (up to twice that across every
     * queue) in at most about 100 statements (exact: false when capped).
     */
    count: (filter?: JobFilter, options?: { max?: number }): Promise<JobCount> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.count(filter)', filter, JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.jobs.count(filter, options)', options, COUNT_KEYS);
        return countJobs(db, tables, filter, options);
      }),
    /**
     * Cancels live jobs — by id, ids, or a filter (queue, name, batchId, state, time) in bounded
     * batches. Waiting, delayed and retrying jobs are removed at once; a running job's worker
     * stops it within one heartbeat. Cancelled jobs are kept in the history as cancelled. The jobs
     * of a workflow that depend on a cancelled one are cancelled too (and counted), unless they
     * continue on failure.
     */
    cancel: (
      target: number | readonly number[] | JobFilter,
      options?: { batchSize?: number; onProgress?: (cancelled: number) => void },
    ): Promise<{ cancelled: number }> =>
      guard(async () => {
        if (typeof target !== 'number' && !Array.isArray(target))
          rejectUnknownKeys('sluice.jobs.cancel(filter)', target, JOB_FILTER_KEYS);
        rejectUnknownKeys('sluice.jobs.cancel(target, options)', options, CANCEL_KEYS);
        const install = runtime.options;
        const { historyRetentionMs } = await runtime.retention.fresh(SETTINGS_MAX_AGE_MS);
        const how = {
          history: historyRetentionMs > 0,
          keyRetentionMs: install.idempotencyRetentionMs,
          redact: install.redactPayload,
          released: new Map<string, number>(), // workflow children that run without the cancelled parent
        };
        let cancelled = 0;
        if (typeof target === 'number' || Array.isArray(target)) {
          const ids = idList(target as number | readonly number[]);
          for (let i = 0; i < ids.length; i += CANCEL_IDS_PER_TRANSACTION) {
            const chunk = ids.slice(i, i + CANCEL_IDS_PER_TRANSACTION);
            cancelled += (await cancelJobs(db, tables, chunk, how)).length;
          }
        } else cancelled = await cancelMatching(db, tables, target as JobFilter, { ...how, ...options });
        ringAfterCommit(runtime, undefined, how.released);
        return { cancelled };
      }),
    /** Makes delayed or retrying jobs due now; returns how many changed. */
    runNow: (ids: number | readonly number[]): Promise<number> => guard(() => moveInTime(idList(ids))),
    /** Ends the backoff of failed jobs waiting to be retried: due now. Returns how many changed. */
    retryNow: (ids: number | readonly number[]): Promise<number> =>
      guard(() => moveInTime(idList(ids), { retryingOnly: true })),
    /** Moves free (not running) jobs to a new time: `{ delayMs }` from now on the DB clock, or `{ runAt }`. */
    reschedule: (ids: number | readonly number[], when: { delayMs?: number; runAt?: Date }): Promise<number> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.reschedule(ids, when)', when, WHEN_KEYS);
        return moveInTime(idList(ids), when);
      }),
    /**
     * Re-runs finished jobs as new jobs, due now: a dead one is re-driven (deadJobs.redrive), a
     * completed or cancelled one is copied from the history into a new live job (same queue, name,
     * payload, priority and retry limit; no idempotency key, no batch) and its history row points at
     * it (`retriedAs`). A job already retried or re-driven, still live, or gone is skipped (not
     * counted). At most 10,000 ids per call, a short transaction per 200.
     */
    retry: (ids: number | readonly number[]): Promise<{ retried: number }> =>
      guard(async () => {
        const list = jobIds('sluice.jobs.retry', ids);
        const finished = await retryFinishedJobs(db, tables, list);
        ringAfterCommit(runtime, undefined, finished.queues);
        const rest = list.filter((id) => !finished.retried.has(id));
        const { redriven } =
          rest.length === 0
            ? { redriven: 0 }
            : await redriveDeadJobs(
                db,
                tables,
                { ids: [...rest] },
                {
                  onMoved: (queues) => ringAfterCommit(runtime, undefined, queues),
                },
              );
        return { retried: finished.retried.size + redriven };
      }),
    /**
     * Deletes finished jobs for good — completed, cancelled (the history) and dead — by id, with
     * their payloads; a live job is left alone (cancel it first), as is a workflow parent whose
     * children are not settled yet. Returns how many were deleted. At most 10,000 ids per call.
     */
    purge: (ids: number | readonly number[]): Promise<{ purged: number }> =>
      guard(async () => {
        const list = jobIds('sluice.jobs.purge', ids);
        const history = await purgeFinishedJobs(db, tables, list);
        const { purged } = await purgeDeadJobs(db, tables, { ids: [...list], includeRedriven: true });
        return { purged: history + purged };
      }),
    /**
     * Resolves with the job's result once it completes; rejects if it dies, is cancelled, or the wait times out.
     * @throws `JobDeadError` (its `lastError`), `JobCancelledError`, `WaitTimeoutError` after `timeoutMs`.
     * @throws `JobNotFoundError` when no job has this id, or it finished without history.
     */
    waitFor: (id: number, options?: WaitOptions): Promise<unknown> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.waitFor(id, options)', options, WAIT_KEYS);
        return waitForJob(db, tables, id, options);
      }),
    /** What completed, was cancelled or died since a cursor (oldest first), and the cursor to poll on from. */
    changes: (options?: ChangesOptions): Promise<{ changes: JobChange[]; cursor: string }> =>
      guard(() => {
        rejectUnknownKeys('sluice.jobs.changes(options)', options, CHANGES_KEYS);
        return jobChanges(db, tables, options);
      }),
  };
}

export type JobsApi = ReturnType<typeof jobsApi>;
