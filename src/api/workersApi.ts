import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { listWorkers, type WorkerInfo } from '../worker/workerRegistry.ts';
import type { Guard } from './Guard.ts';

/**
 * `sluice.workers`: the worker registry, one row per live worker with its load, counts and
 * heartbeat age. Callable as `sluice.workers()` too: the earlier name, deprecated.
 */
export function workersApi(db: Executor, tables: Tables, guard: Guard) {
  const list = (): Promise<WorkerInfo[]> => guard(() => listWorkers(db, tables));
  /** @deprecated Use `sluice.workers.list()`. */
  const deprecatedCall = (): Promise<WorkerInfo[]> => list();
  return Object.assign(deprecatedCall, { list });
}

export type WorkersApi = ReturnType<typeof workersApi>;
