import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { OptionsError } from '../errors.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { normalizeSchedule, SCHEDULE_KEY, type ScheduleSpec } from '../model/scheduleSpec.ts';
import { integerIn, optionKeys, rejectUnknownKeys } from '../options.ts';
import {
  getRuntimeSchedule,
  listRuntimeSchedules,
  MAX_SCHEDULE_PAGE,
  type SchedulePage,
} from '../scheduler/listRuntimeSchedules.ts';
import { listSchedules, type ScheduleInfo } from '../scheduler/listSchedules.ts';
import { pauseSchedule, removeSchedule, resumeSchedule } from '../scheduler/pauseSchedule.ts';
import type { Schedule } from '../scheduler/scheduleRow.ts';
import { listScheduleRuns, RUNS_KEPT, type ScheduleRun } from '../scheduler/scheduleRuns.ts';
import { type UpsertResult, upsertSchedule } from '../scheduler/upsertSchedule.ts';
import { loadHandlers } from '../worker/loadHandlers.ts';
import type { Guard } from './Guard.ts';

export type { Schedule, SchedulePage, ScheduleRun, ScheduleSpec, UpsertResult };

/** `sluice.schedules.list(options)`. Every field is optional. */
export interface ScheduleListOptions {
  /** The key after which the page starts (the `next` of the page before). @defaultValue '' */
  readonly after?: string;
  /** Schedules per page, at most 500. @defaultValue 100 */
  readonly limit?: number;
}

const LIST_KEYS = optionKeys<ScheduleListOptions>({ after: true, limit: true });
const RUNS_KEYS = optionKeys<{ limit?: number }>({ limit: true });

function keyOf(call: string, key: unknown): string {
  if (typeof key !== 'string' || !SCHEDULE_KEY.test(key))
    throw new OptionsError(
      `${call}: key`,
      `must be a schedule key (1–160 of [A-Za-z0-9_.:@/+=-]) (got ${JSON.stringify(key)})`,
    );
  return key;
}

/**
 * `sluice.schedules`: run-time schedules (`upsert`, `remove`, `pause`, `resume`, `get`, `runs`,
 * and `list`, paged by key), and the recurring jobs among job definitions (`files(jobs)`, or the
 * earlier `list(jobs)` with a folder or a list of definitions). Callable as `sluice.schedules(jobs)`
 * too: the earliest name, deprecated.
 */
export function schedulesApi(db: Executor, tables: Tables, guard: Guard, maxPayloadBytes: number) {
  /**
   * The recurring jobs (those with a `schedule`) among the definitions of a jobs folder (by default
   * `jobs`) or a list, each with its cron, time zone, next slot and the last slot enqueued.
   * @throws `JobDefinitionError` when a file of the folder is not a job definition.
   */
  const files = (jobs: string | readonly JobDefinition<any>[] = 'jobs'): Promise<ScheduleInfo[]> =>
    guard(async () => listSchedules(db, tables, [...(await loadHandlers(jobs)).values()]));
  function list(options?: ScheduleListOptions): Promise<SchedulePage>;
  /** @deprecated Use `sluice.schedules.files(jobs)`. */
  function list(jobs: string | readonly JobDefinition<any>[]): Promise<ScheduleInfo[]>;
  async function list(
    arg?: ScheduleListOptions | string | readonly JobDefinition<any>[],
  ): Promise<SchedulePage | ScheduleInfo[]> {
    if (typeof arg === 'string' || Array.isArray(arg)) return files(arg as string | readonly JobDefinition<any>[]);
    const options = (arg ?? {}) as ScheduleListOptions;
    rejectUnknownKeys('sluice.schedules.list', options, LIST_KEYS);
    const limit = integerIn('limit', options.limit ?? 100, 1, MAX_SCHEDULE_PAGE);
    const after = options.after ?? '';
    if (typeof after !== 'string') throw new OptionsError('after', 'must be a schedule key');
    return guard(() => listRuntimeSchedules(db, tables, after, limit));
  }
  const api = {
    list,
    files,
    /** Creates or changes a run-time schedule (by its key); refuses a bad spec with OptionsError, writing nothing. */
    upsert: async (spec: ScheduleSpec): Promise<UpsertResult> => {
      const normalized = normalizeSchedule(spec, maxPayloadBytes);
      return guard(() => upsertSchedule(db, tables, normalized));
    },
    /** Removes a schedule and its runs; its jobs already enqueued stay. False when the key is unknown. */
    remove: async (key: string): Promise<boolean> => {
      const k = keyOf('sluice.schedules.remove', key);
      return guard(() => removeSchedule(db, tables, k));
    },
    /** Pauses a schedule. False when the key is unknown or it is paused already. */
    pause: async (key: string): Promise<boolean> => {
      const k = keyOf('sluice.schedules.pause', key);
      return guard(() => pauseSchedule(db, tables, k));
    },
    /** Resumes a paused schedule (missed ticks follow its `missed`). False when unknown or not paused. */
    resume: async (key: string): Promise<boolean> => {
      const k = keyOf('sluice.schedules.resume', key);
      return guard(() => resumeSchedule(db, tables, k));
    },
    /** One run-time schedule, or null. */
    get: async (key: string): Promise<Schedule | null> => {
      const k = keyOf('sluice.schedules.get', key);
      return guard(() => getRuntimeSchedule(db, tables, k));
    },
    /** A schedule's latest jobs (at most 20 are kept), newest first. */
    runs: async (key: string, options: { limit?: number } = {}): Promise<ScheduleRun[]> => {
      const k = keyOf('sluice.schedules.runs', key);
      rejectUnknownKeys('sluice.schedules.runs', options, RUNS_KEYS);
      const limit = integerIn('limit', options.limit ?? RUNS_KEPT, 1, RUNS_KEPT);
      return guard(() => listScheduleRuns(db, tables, k, limit));
    },
  };
  /** @deprecated Use `sluice.schedules.files(jobs)`. */
  const deprecatedCall = (jobs?: string | readonly JobDefinition<any>[]): Promise<ScheduleInfo[]> => files(jobs);
  return Object.assign(deprecatedCall, api);
}

export type SchedulesApi = ReturnType<typeof schedulesApi>;
