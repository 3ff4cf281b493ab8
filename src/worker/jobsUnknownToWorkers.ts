import type { WorkerInfo } from './workerRegistry.ts';

/** A job name that live workers gave back for want of a handler, and that no live worker knows. */
export interface JobUnknownToWorkers {
  readonly name: string;
  /** The queues its jobs were given back from (by name). */
  readonly queues: readonly string[];
  /** The workers that gave its jobs back. */
  readonly workers: number;
  /** How many of its jobs they gave back since they started (a job given back twice counts twice). */
  readonly givenBack: number;
}

/**
 * Pure: the job names the fleet's workers gave back (each worker's unknownJobs) that no worker of
 * the fleet has a handler for (each worker's jobNames), in name order. Such jobs wait, no attempt
 * spent, until a worker that knows them starts. A name one worker gave back and another knows is
 * not in it: a rolling deploy in progress, the other worker runs them.
 */
export function jobsUnknownToWorkers(
  workers: readonly Pick<WorkerInfo, 'jobNames' | 'unknownJobs'>[],
): JobUnknownToWorkers[] {
  const known = new Set(workers.flatMap((w) => w.jobNames));
  const byName = new Map<string, { queues: Set<string>; workers: number; givenBack: number }>();
  for (const worker of workers) {
    for (const u of worker.unknownJobs) {
      if (known.has(u.name)) continue;
      const entry = byName.get(u.name) ?? { queues: new Set<string>(), workers: 0, givenBack: 0 };
      entry.queues.add(u.queue);
      entry.workers++;
      entry.givenBack += u.givenBack;
      byName.set(u.name, entry);
    }
  }
  return [...byName]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, e]) => ({ name, queues: [...e.queues].sort(), workers: e.workers, givenBack: e.givenBack }));
}
