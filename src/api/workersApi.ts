import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type MaintenanceHealth, maintenanceHealth } from '../maintenance/maintenanceHealth.ts';
import { optionKeys, rejectUnknownKeys } from '../options.ts';
import { type JobUnknownToWorkers, jobsUnknownToWorkers } from '../worker/jobsUnknownToWorkers.ts';
import { listWorkers, type WorkerInfo } from '../worker/workerRegistry.ts';
import type { Guard } from './Guard.ts';

const LIST_KEYS = optionKeys<{ metrics?: boolean }>({ metrics: true });

/**
 * `sluice.workers`: the worker registry, one row per live worker with its load, counts and
 * heartbeat age, and the maintenance processes' health. Callable as `sluice.workers()` too: the earlier name, deprecated.
 */
export function workersApi(db: Executor, tables: Tables, guard: Guard) {
  /**
   * The live workers (one statement). With `metrics: true` each carries its counters and
   * histograms as it last sent them (what `sluice metrics` serves).
   */
  const list = (options: { metrics?: boolean } = {}): Promise<WorkerInfo[]> =>
    guard(() => {
      rejectUnknownKeys('sluice.workers.list(options)', options, LIST_KEYS);
      return listWorkers(db, tables, options.metrics === true);
    });
  /**
   * The job names no live worker knows: live workers claimed their jobs, had no handler for them
   * and gave them back (no attempt spent), and no live worker has one. Their jobs wait until a
   * worker whose jobs folder has them starts. One statement (the fleet's rows).
   */
  const unknownJobs = (): Promise<JobUnknownToWorkers[]> =>
    guard(async () => jobsUnknownToWorkers(await listWorkers(db, tables)));
  /**
   * Whether maintenance runs: who holds the maintenance leader lease (null: nobody), how long ago
   * the lease ran out if its holder stopped renewing it, and each maintenance task's last run as
   * the leader recorded it after each pass (how long ago, how long it took, what it changed,
   * whether it stopped with more to do), newest first. Ages are on the database's clock. One
   * statement over two small tables.
   */
  const maintenance = (): Promise<MaintenanceHealth> => guard(() => maintenanceHealth(db, tables));
  /** @deprecated Use `sluice.workers.list()`. */
  const deprecatedCall = (): Promise<WorkerInfo[]> => list();
  return Object.assign(deprecatedCall, { list, unknownJobs, maintenance });
}

export type WorkersApi = ReturnType<typeof workersApi>;
