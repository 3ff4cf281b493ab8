import type { JobCount } from '../jobs/countJobs.ts';
import type { PageContext } from './PageContext.ts';

/** What the overview and a queue's page show of one queue. */
export interface QueueCounts {
  readonly queue: string;
  readonly waiting: JobCount;
  readonly delayed: JobCount;
  readonly retrying: JobCount;
  readonly running: JobCount;
  readonly dead: JobCount;
  readonly oldestReadyMs: number | null;
  readonly paused: boolean;
  /** Live workers that listen to the queue. */
  readonly workers: number;
  /** Why the queue needs a look (empty when it is fine). */
  readonly problems: readonly string[];
}

const STATES = ['waiting', 'delayed', 'retrying', 'running', 'dead'] as const;

/**
 * One queue's counts through the job-control API's bounded counts (each reads at most
 * countLimit index entries, so a queue of millions answers as "10,000+"), its oldest ready
 * job's age (a seek per priority) and what makes it a problem.
 */
export async function queueCounts(
  ctx: PageContext,
  queue: string,
  context: { paused: ReadonlySet<string>; workerQueues: readonly (readonly string[])[] },
): Promise<QueueCounts> {
  const max = ctx.options.countLimit;
  const [counts, oldestReadyMs] = await Promise.all([
    Promise.all(STATES.map((state) => ctx.sluice.jobs.count({ queue, state }, { max }))),
    ctx.reads.oldestReadyMs(queue),
  ]);
  const [waiting, delayed, retrying, running, dead] = counts as [JobCount, JobCount, JobCount, JobCount, JobCount];
  const paused = context.paused.has(queue);
  const workers = context.workerQueues.filter((queues) => queues.includes(queue)).length;
  const problems: string[] = [];
  if (paused) problems.push('paused');
  if (dead.count > 0) problems.push('dead jobs');
  if (oldestReadyMs !== null && oldestReadyMs > ctx.options.problemAgeMs) problems.push('backing up');
  if (waiting.count > 0 && workers === 0 && !paused) problems.push('no worker');
  return { queue, waiting, delayed, retrying, running, dead, oldestReadyMs, paused, workers, problems };
}
