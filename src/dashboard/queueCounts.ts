import type { BoundedCount, QueueDepth } from '../stats/queueDepth.ts';
import type { PageContext } from './PageContext.ts';

/** What the overview and a queue's page show of one queue. */
export interface QueueCounts {
  readonly queue: string;
  readonly ready: BoundedCount;
  /** Delayed or retrying: free, not yet due. */
  readonly notDue: BoundedCount;
  /** Held back: waiting for parents or a limit (never due until released, never "backing up"). */
  readonly held: BoundedCount;
  readonly running: BoundedCount;
  readonly dead: BoundedCount;
  readonly oldestReadyMs: number | null;
  readonly paused: boolean;
  /** Live workers that listen to the queue. */
  readonly workers: number;
  /** Why the queue needs a look (empty when it is fine). */
  readonly problems: readonly string[];
}

/**
 * Some queues' counts, each reading at most countLimit index entries (so a queue of millions
 * answers as "10,000+"), in a few statements however many queues (queueDepths: ready / not yet due
 * / held / running from ix_head's covering ranges, dead from ix_queue_failed); and what makes each a problem.
 */
export async function queueCounts(
  ctx: PageContext,
  queues: readonly string[],
  context: { paused: ReadonlySet<string>; workerQueues: readonly (readonly string[])[] },
): Promise<QueueCounts[]> {
  const depths = new Map(
    (await ctx.sluice.queues.depth({ queues, max: ctx.options.countLimit })).map((row) => [row.queue, row]),
  );
  return queues.map((queue) => {
    const depth = depths.get(queue) as QueueDepth;
    const paused = context.paused.has(queue);
    const workers = context.workerQueues.filter((names) => names.includes(queue)).length;
    const problems: string[] = [];
    if (paused) problems.push('paused');
    if (depth.dead.count > 0) problems.push('dead jobs');
    if (depth.oldestReadyMs !== null && depth.oldestReadyMs > ctx.options.problemAgeMs) problems.push('backing up');
    if (depth.ready.count > 0 && workers === 0 && !paused) problems.push('no worker');
    return { queue, ...depth, paused, workers, problems };
  });
}
