import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { listQueueNames } from '../queues/listQueueNames.ts';

/**
 * One maintenance service: a name, and runOnce(), one bounded step that returns what it changed
 * as named counts. The maintenance loop runs a list of these in order (Maintenance.ts); the pass
 * result, its event and its log line are made from the counts, never restated. A task that judges
 * liveness by watching rows change may also have observe(): it only reads, and every pass runs it
 * first, leader or not, so that a take-over can act on what it already watched.
 */
export interface MaintenanceTask<N extends string = string, C extends string = string> {
  readonly name: N;
  runOnce(): Promise<Readonly<Record<C, number>>>;
  observe?(): Promise<void>;
}

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

/** Queue names read per statement when a task lists the queues holding claims. */
const QUEUE_PAGE = 1_000;

/**
 * Every queue holding a claimed job, where the claim tasks look (ix_head, one range per queue): a
 * page of names per statement, so a pass costs one statement per thousand queues, not one per
 * queue; a queue without a claim costs nothing more.
 */
export async function claimedQueues({ db, tables }: TaskDb): Promise<string[]> {
  const names: string[] = [];
  for (;;) {
    const page = await listQueueNames(db, tables, { of: 'claimed', after: names.at(-1), limit: QUEUE_PAGE });
    names.push(...page.map((q) => q.name));
    if (page.length < QUEUE_PAGE) return names;
  }
}

/** The counts of one task. */
export type TaskCounts<T> = T extends MaintenanceTask<string, infer C> ? Readonly<Record<C, number>> : never;

/** The counts of a list of tasks, by task name. */
export type PassCounts<Ts extends readonly MaintenanceTask[]> = {
  readonly [T in Ts[number] as T['name']]: TaskCounts<T>;
};

/** Pure: the sum of every count of a pass: what the log line calls "changed". */
export function totalChanged(tasks: Readonly<Record<string, Readonly<Record<string, number>>>>): number {
  let sum = 0;
  for (const counts of Object.values(tasks)) for (const n of Object.values(counts)) sum += n;
  return sum;
}
