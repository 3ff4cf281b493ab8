import type { BoundedCount } from '../stats/queueDepth.ts';
import type { PageContext } from './PageContext.ts';

/** What the overview and a queue's page show of one queue. */
export interface QueueCounts {
  readonly queue: string;
  readonly ready: BoundedCount;
  /** Delayed or retrying: free, not yet due. */
  readonly notDue: BoundedCount;
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
 * One queue's counts, each reading at most countLimit index entries (so a queue of millions
 * answers as "10,000+"): ready / not yet due / running from ix_head's covering ranges
 * and dead jobs through their bounded count (sluice.queues.depth); and what makes it a problem.
 */
export async function queueCounts(
  ctx: PageContext,
  queue: string,
  context: { paused: ReadonlySet<string>; workerQueues: readonly (readonly string[])[] },
): Promise<QueueCounts> {
  const [depth] = await ctx.sluice.queues.depth({ queue, max: ctx.options.countLimit });
  if (!depth) throw new Error(`no depth read for queue ${queue}`);
  const { dead } = depth;
  const paused = context.paused.has(queue);
  const workers = context.workerQueues.filter((queues) => queues.includes(queue)).length;
  const problems: string[] = [];
  if (paused) problems.push('paused');
  if (dead.count > 0) problems.push('dead jobs');
  if (depth.oldestReadyMs !== null && depth.oldestReadyMs > ctx.options.problemAgeMs) problems.push('backing up');
  if (depth.ready.count > 0 && workers === 0 && !paused) problems.push('no worker');
  return { ...depth, paused, workers, problems };
}
