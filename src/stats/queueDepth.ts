import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type BranchCount, type CountBranch, countSegments } from '../jobControl/countJobs.ts';
import { planJobs } from '../jobControl/jobPlans.ts';
import type { Segment } from '../jobControl/Plan.ts';
import { freeSegment, runningSegment } from '../jobControl/QueueWalk.ts';
import { freePriorities } from '../queues/nextFreePriority.ts';
import { smallQueueDepths } from './smallQueueDepths.ts';

/** Each count of a depth read stops after this many index entries unless the caller says otherwise. */
export const DEPTH_MAX_DEFAULT = 10_000;
/** Most queues one depth read of every queue covers (queue names in order). */
export const DEPTH_QUEUES_DEFAULT = 200;

/** A count that read at most its cap of index entries: exact, or at least `count`. */
export interface BoundedCount {
  readonly count: number;
  readonly exact: boolean;
}

export interface QueueDepth {
  /** Free and due. */
  readonly ready: BoundedCount;
  /** Free, not yet due: delayed, or retrying after a failure (telling them apart costs a row read each). */
  readonly notDue: BoundedCount;
  /**
   * Held back (run_at = HELD_RUN_AT: a workflow's jobs waiting for their parents, jobs held by a
   * limit): never due until released, so counted apart from notDue and never in ready or the
   * oldest ready job's wait (a held job cannot make a queue look late or break its promise).
   */
  readonly held: BoundedCount;
  readonly running: BoundedCount;
  /** Dead and not re-driven. */
  readonly dead: BoundedCount;
  /** The oldest ready job's wait (DB clock); null when none is ready. */
  readonly oldestReadyMs: number | null;
}

export interface QueueDepthOptions {
  /** Most index entries each count of a queue reads (its ready, not-due, running and dead jobs). */
  readonly max: number;
  /** Most distinct free priorities of a queue counted; past them its free counts say "at least". @defaultValue 32 */
  readonly maxPriorities?: number;
}

/**
 * How deep some queues are, from index entries alone, in a few statements whatever their number:
 * the queues of at most `max` jobs (most of them) counted whole (smallQueueDepths); for the others,
 * their free priorities (freePriorities), then every count through the one bounded count read
 * (countSegments, 250 ranges per statement) — per free priority the due and the not-yet-due and
 * the held jobs (covering ix_head ranges; the due one also gives its oldest job's age), the claimed
 * range, and the dead jobs. Each count of a queue reads at most `max` entries in all (its
 * priorities share them), so a queue of millions answers in the time `max` entries take.
 * stats() counts exactly but reads the whole live table.
 */
export async function queueDepths(
  db: Executor,
  tables: Tables,
  queues: readonly string[],
  options: QueueDepthOptions,
): Promise<Map<string, QueueDepth>> {
  const names = [...new Set(queues)].sort();
  if (names.length === 0) return new Map();
  const small = await smallQueueDepths(db, tables, names, options.max);
  const large = await largeQueueDepths(
    db,
    tables,
    names.filter((q) => !small.live.has(q)),
    names.filter((q) => !small.dead.has(q)),
    options,
  );
  const exact = (count: number): BoundedCount => ({ count, exact: true });
  // Each half of a queue comes from one read or the other: the small one, else the ranged one.
  return new Map(
    names.map((queue) => {
      const live = small.live.get(queue);
      const dead = small.dead.get(queue);
      const counted = large.get(queue) as QueueDepth;
      const liveHalf = live
        ? {
            ready: exact(live.ready),
            notDue: exact(live.notDue),
            held: exact(live.held),
            running: exact(live.running),
            oldestReadyMs: live.oldestReadyMs,
          }
        : counted;
      return [queue, { ...liveHalf, dead: dead === undefined ? counted.dead : exact(dead) }];
    }),
  );
}

/**
 * The counts of the queues of more than `max` live jobs (`live`) or dead ones (`dead`), range by
 * range, each read stopped at its limit. A queue in one list only has zeros in the other half
 * (its caller reads that half from smallQueueDepths).
 */
async function largeQueueDepths(
  db: Executor,
  tables: Tables,
  live: readonly string[],
  dead: readonly string[],
  options: QueueDepthOptions,
): Promise<Map<string, QueueDepth>> {
  const names = [...new Set([...live, ...dead])].sort();
  if (names.length === 0) return new Map();
  const maxPriorities = options.maxPriorities ?? 32;
  const free =
    live.length === 0
      ? { byQueue: new Map<string, number[]>(), incomplete: new Set<string>() }
      : await freePriorities(db, tables, live, 100 * (maxPriorities + 1));
  const countsLive = new Set(live);
  const countsDead = new Set(dead);
  const plans = names.map((queue) => {
    const all = free.byQueue.get(queue) ?? [];
    const cut = free.incomplete.has(queue) || all.length > maxPriorities;
    return { queue, priorities: all.slice(0, maxPriorities), cut };
  });
  const branches: CountBranch[] = [];
  const add = (segment: Segment, residual: CountBranch['residual'], limit: number, age = false) =>
    branches.push({ segment, residual, limit, age }) - 1;
  const slots = plans.map(({ queue, priorities }) => {
    const share = Math.max(1, Math.floor(options.max / Math.max(1, priorities.length)));
    const deadPlan = planJobs(tables, { queue, state: 'dead' });
    return {
      ready: priorities.map((p) => add(freeSegment(tables, queue, p, 'due'), null, share, true)),
      notDue: priorities.map((p) => add(freeSegment(tables, queue, p, 'notDue'), null, share)),
      held: priorities.map((p) => add(freeSegment(tables, queue, p, 'held'), null, share)),
      running: countsLive.has(queue) ? add(runningSegment(tables, queue), null, options.max) : null,
      dead: countsDead.has(queue) ? add(deadPlan.single as Segment, deadPlan.residual, options.max) : null,
    };
  });
  const counts = await countSegments(db, branches);
  const at = (i: number) => counts[i] as BranchCount;
  const one = (i: number | null): BoundedCount =>
    i === null ? { count: 0, exact: true } : summed([at(i)], branches, [i], false, options.max);
  return new Map(
    plans.map(({ queue, cut }, q) => {
      const slot = slots[q] as (typeof slots)[number];
      const sum = (ids: number[]) => summed(ids.map(at), branches, ids, cut, options.max);
      const ages = slot.ready.map((i) => at(i).ageMs).filter((a): a is number => a !== null);
      return [
        queue,
        {
          ready: sum(slot.ready),
          notDue: sum(slot.notDue),
          held: sum(slot.held),
          running: one(slot.running),
          dead: one(slot.dead),
          oldestReadyMs: ages.length === 0 ? null : Math.max(...ages),
        },
      ];
    }),
  );
}

/**
 * The matches of some branches, at most `max` (more priorities than `max` still read one entry
 * each, for the oldest job's age): exact when none filled its limit and no priority was left out.
 */
function summed(
  counted: readonly BranchCount[],
  branches: readonly CountBranch[],
  ids: readonly number[],
  cut: boolean,
  max: number,
): BoundedCount {
  const count = Math.min(
    max,
    counted.reduce((n, c) => n + c.matched, 0),
  );
  const filled = counted.some((c, i) => c.examined >= (branches[ids[i] as number] as CountBranch).limit);
  return { count, exact: !cut && !filled };
}
