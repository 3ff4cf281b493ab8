import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { listSchedules, type ScheduleInfo } from '../scheduler/listSchedules.ts';
import { loadHandlers } from '../worker/loadHandlers.ts';
import type { Guard } from './Guard.ts';

/**
 * `sluice.schedules`: the recurring jobs among job definitions (a jobs folder or a list), with
 * their next and last slot. Callable as `sluice.schedules(jobs)` too: the earlier name, deprecated.
 */
export function schedulesApi(db: Executor, tables: Tables, guard: Guard) {
  /**
   * The recurring jobs (those with a `schedule`) among the definitions of a jobs folder (by default
   * `jobs`) or a list, each with its cron, time zone, next slot and the last slot enqueued.
   * @throws `JobDefinitionError` when a file of the folder is not a job definition.
   */
  const list = (jobs: string | readonly JobDefinition<any>[] = 'jobs'): Promise<ScheduleInfo[]> =>
    guard(async () => listSchedules(db, tables, [...(await loadHandlers(jobs)).values()]));
  /** @deprecated Use `sluice.schedules.list(jobs)`. */
  const deprecatedCall = (jobs?: string | readonly JobDefinition<any>[]): Promise<ScheduleInfo[]> => list(jobs);
  return Object.assign(deprecatedCall, { list });
}

export type SchedulesApi = ReturnType<typeof schedulesApi>;
