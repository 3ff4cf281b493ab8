/** Readers of the maintenance process's `maintenance:completed` log lines (spawnMaintenance's children). */
import type { LogLine } from './spawnSluice.ts';

/** A count from a maintenance:completed log line: `tasks.<task>.<count>`, 0 when the task did not run. */
export function taskCount(line: LogLine, task: string, count: string): number {
  const tasks = line.tasks as Record<string, Record<string, number>> | undefined;
  return tasks?.[task]?.[count] ?? 0;
}

/** Claims a maintenance pass released: stale ones and those of dead workers. */
export function claimsReleased(line: LogLine): number {
  return taskCount(line, 'releaseStaleClaims', 'claims') + taskCount(line, 'releaseDeadWorkers', 'claims');
}
