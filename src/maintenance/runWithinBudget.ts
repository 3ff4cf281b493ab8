import type { MaintenanceTask } from '../task/MaintenanceTask.ts';
import type { TaskRun } from './maintenanceHealth.ts';
import type { MonotonicClock } from './UnchangedSince.ts';

/** What one pass's tasks did: each task's counts by name, and each run as the leader records it. */
export interface BudgetedRun {
  readonly counts: Record<string, Readonly<Record<string, number>>>;
  readonly runs: readonly TaskRun[];
}

/**
 * Runs one pass's tasks in order under one time budget, while `stillLeading()` holds: each gets
 * what is left of `budgetMs` (0 once it is spent) and, if it walks a backlog, stops after the
 * statement that crosses it and goes on from there next pass. Every task still takes its first
 * step every pass, so nothing waits behind a heavy one: a pass costs the budget plus at most one
 * step of each task after it (a page of `batchSize` rows, one read of queue depths). Tasks that do
 * not walk (releasing crashed workers' claims, firing schedules) are bounded by their batches instead.
 */
export async function runWithinBudget(
  tasks: readonly MaintenanceTask[],
  budgetMs: number,
  clock: MonotonicClock,
  stillLeading: () => boolean,
): Promise<BudgetedRun> {
  const started = clock();
  const counts: Record<string, Readonly<Record<string, number>>> = {};
  const runs: TaskRun[] = [];
  for (const task of tasks) {
    if (!stillLeading()) break;
    const taskStarted = clock();
    const taskCounts = await task.runOnce(Math.max(0, budgetMs - (taskStarted - started)));
    counts[task.name] = taskCounts;
    runs.push({ task: task.name, durationMs: clock() - taskStarted, counts: taskCounts, behind: task.behind === true });
  }
  return { counts, runs };
}
