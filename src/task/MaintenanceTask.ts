import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * One maintenance service: a name, its options (resolved from all-optional options with their
 * defaults and validated once, when the task is made: a bad one throws OptionsError naming it),
 * and runOnce(), one bounded step that returns what it changed as named counts. The maintenance
 * loop runs a list of these in order (Maintenance.ts); the pass result, its event and its log line
 * are made from the counts, never restated. A task that judges liveness by watching rows change
 * may also have observe(): it only reads, and every pass runs it first, leader or not, so that a
 * take-over can act on what it already watched.
 *
 * A pass shares one time budget among its tasks (runWithinBudget.ts): runOnce(budgetMs) gets what
 * is left of it, and a task that walks a backlog stops after the statement that crossed it (or its
 * own budget, if smaller), going on from there next time; one that does not walk ignores it.
 */
export interface MaintenanceTask<N extends string = string, C extends string = string, O extends object = object> {
  readonly name: N;
  readonly options: O;
  runOnce(budgetMs?: number): Promise<Readonly<Record<C, number>>>;
  observe?(): Promise<void>;
  /**
   * A task that works through a backlog in bounded runs (retention) says here whether its last
   * run stopped with more to do: the maintenance process then runs it again soon, not at its next tick.
   */
  readonly behind?: boolean;
}

/** The defaults the tasks share; the maintenance process's own options start from the same values. */
export const TASK_DEFAULTS = {
  /** Rows per maintenance statement. */
  batchSize: 500,
  /** Most random pause between batches (each task caps it lower). */
  jitterMs: 1_000,
  /** Most retention-pruning batches per table in one run: a bound on its statements. */
  maxBatches: 200,
  /** How long one retention task keeps deleting full batches in one run. */
  pruneBudgetMs: 1_000,
  /**
   * How long one pass's walking tasks may take between them (each stops after the statement that
   * crosses it): 750 ms, so that with one step of each later task a pass stays within 1 s.
   */
  passBudgetMs: 750,
} as const;

/** Claims a release left alone because another transaction holds their rows; tried again next pass. */
export interface SkippedRelease {
  readonly task: string;
  readonly queue: string;
  /** The dead worker whose claims these are, or null for claims released by the lock timeout. */
  readonly workerId: string | null;
  readonly jobIds: readonly number[];
  readonly reason: string;
}

/** What a task reaches the database through (tests pass an Executor that injects races). */
export interface TaskDb {
  readonly db: Executor;
  readonly tables: Tables;
}

/** The counts of one task. */
export type TaskCounts<T> = T extends MaintenanceTask<string, infer C> ? Readonly<Record<C, number>> : never;

/** The counts of a list of tasks, by task name. */
export type PassCounts<Ts extends readonly MaintenanceTask[]> = {
  readonly [T in Ts[number] as T['name']]: TaskCounts<T>;
};

/** Counts of any pass, by task name then count name (what an event subscriber sees). */
export type AnyPassCounts = Readonly<Record<string, Readonly<Record<string, number>>>>;

/** One maintenance pass: whether this process led it, and if so what each task changed. */
export interface MaintenancePass<Counts extends object = AnyPassCounts> {
  /**
   * False when another process holds the lease: nothing was changed and `tasks` is empty (the
   * tasks that judge liveness still watched the rows, so that a take-over can act at once).
   */
  readonly leader: boolean;
  readonly durationMs: number;
  /** The sum of every count in `tasks`. */
  readonly changed: number;
  readonly tasks: Partial<Counts>;
  /** The tasks that stopped with more to do (a retention's last batch came back full): run again soon. */
  readonly behind: readonly string[];
}

/** Pure: the sum of every count of a pass: what the log line calls "changed". */
export function totalChanged(tasks: Readonly<Record<string, Readonly<Record<string, number>>>>): number {
  let sum = 0;
  for (const counts of Object.values(tasks)) for (const n of Object.values(counts)) sum += n;
  return sum;
}
