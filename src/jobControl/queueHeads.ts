import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { listQueueNames, type QueueName } from '../queues/listQueueNames.ts';
import { freePriorities } from '../queues/nextFreePriority.ts';

/** Queue names read per statement by a walk over every live queue. */
const QUEUES_PER_READ = 1_000;

/** (queue, priority) pairs read per statement by the same walk. */
const PRIORITIES_PER_READ = 2_000;

/** A live queue as a walk over every queue (jobPlans.ts) meets it. */
export interface QueueHead {
  readonly queue: string;
  /** Whether any of its jobs was claimed when read (its running segment may hold rows). */
  readonly claimed: boolean;
  /** Its free priorities, ascending, as far as the read got. */
  readonly priorities: readonly number[];
  /** False when more priorities may follow the last one (a queue with more than one read holds). */
  readonly complete: boolean;
}

/**
 * Every live queue after `after`, in name order, with its free priorities (when `priorities`):
 * a statement or two per thousand queues (one more per hundred queues with several priorities),
 * so that the statements of a walk grow with the segments it reads, not with the queues it passes.
 * `claimedOnly` passes only the queues holding a claim.
 */
export async function* queueHeads(
  db: Executor,
  t: Tables,
  options: { after?: string; priorities: boolean; claimedOnly: boolean },
): AsyncGenerator<QueueHead> {
  let after = options.after;
  for (;;) {
    const page = await listQueueNames(db, t, {
      of: options.claimedOnly ? 'claimed' : 'live',
      ...(after === undefined ? {} : { after }),
      limit: QUEUES_PER_READ,
    });
    if (options.priorities) yield* withPriorities(db, t, page.names);
    else for (const q of page.names) yield { queue: q.name, claimed: q.claimed, priorities: [], complete: false };
    if (page.next === null) return;
    after = page.next;
  }
}

/** The heads of `names` (in name order) with their free priorities (freePriorities: a read or two per thousand queues). */
async function* withPriorities(db: Executor, t: Tables, names: readonly QueueName[]): AsyncGenerator<QueueHead> {
  const free = await freePriorities(
    db,
    t,
    names.map((q) => q.name),
    PRIORITIES_PER_READ,
  );
  for (const q of names) {
    yield {
      queue: q.name,
      claimed: q.claimed,
      priorities: free.byQueue.get(q.name) ?? [],
      complete: !free.incomplete.has(q.name),
    };
  }
}
