import { OptionsError, SluiceError } from '../errors.ts';
import type { SluiceEventMap } from '../events.ts';
import type { JobDefinition } from '../model/defineJob.ts';
import { assertQueueName } from '../model/queueName.ts';
import { integerIn, rejectUnknownKeys } from '../options.ts';
import type { Sluice } from '../Sluice.ts';

/** drainQueues' options. */
export interface DrainOptions {
  /** The job definitions the worker runs, or a folder of job files. */
  readonly jobs: string | JobDefinition<any>[];
  /** Queues to drain (at most 100). @defaultValue `['default']` */
  readonly queues?: string[];
  /** Jobs run at once. @defaultValue 10 */
  readonly concurrency?: number;
  /** How long the queues may take to become idle; past it the worker is forced to stop and SLUICE_TESTING_DRAIN_TIMEOUT is thrown. @defaultValue 30,000 */
  readonly timeoutMs?: number;
}

/** What the worker did while draining: attempts by how they ended. */
export interface DrainCounts {
  /** Attempts whose handler succeeded. */
  readonly completed: number;
  /** Attempts whose handler failed (each one, whether the job was then retried or dead-lettered). */
  readonly failed: number;
  /** Jobs dead-lettered (their retries ran out, or a PermanentJobError). */
  readonly dead: number;
  /** Attempts that snoozed (ctx.snooze, RateLimitedError). */
  readonly snoozed: number;
  /** Jobs cancelled while they ran. */
  readonly cancelled: number;
}

const OPTION_KEYS = ['jobs', 'queues', 'concurrency', 'timeoutMs'];

/** How often the queues are looked at once the worker has nothing in hand (jittered ±25 %). */
const CHECK_MS = 50;

/**
 * Runs a real worker in this process on `queues` until none of them has a due job left, then stops
 * it and returns what it did (BullMQ's "run the worker until drained", Oban's drain_queue). Idle
 * means no job waiting or running in any of the queues: jobs not yet due (a delay, a retry's
 * backoff, a snooze) and held jobs are left for later, so a job retried with a backoff counts once
 * as failed and stays. Jobs a completion releases (a workflow's children) are run in the same
 * drain. Throws SLUICE_TESTING_DRAIN_TIMEOUT, with the counts so far, when the queues are not
 * idle within timeoutMs.
 */
export async function drainQueues(sluice: Sluice, options: DrainOptions): Promise<DrainCounts> {
  rejectUnknownKeys('drainQueues', options, OPTION_KEYS);
  if (options?.jobs === undefined) throw new OptionsError('jobs', 'is required: the job definitions or a folder');
  const queues = options.queues ?? ['default'];
  if (!Array.isArray(queues) || queues.length === 0 || queues.length > 100)
    throw new OptionsError('queues', 'must be a list of 1 to 100 queue names');
  for (const queue of queues) assertQueueName('queues', queue);
  const timeoutMs = integerIn('timeoutMs', options.timeoutMs ?? 30_000, 1, 3_600_000);
  const worker = sluice.worker({
    queues,
    jobs: options.jobs,
    concurrency: options.concurrency ?? 10,
    pollIntervalMs: CHECK_MS,
    maxPollIntervalMs: 4 * CHECK_MS,
  });
  const counts = { completed: 0, failed: 0, dead: 0, snoozed: 0, cancelled: 0 };
  const ours = (count: keyof DrainCounts) => (event: { workerId: string }) => {
    if (event.workerId === worker.id) counts[count]++;
  };
  const listeners = [
    ['job:completed', ours('completed')],
    ['job:failed', ours('failed')],
    ['job:dead', ours('dead')],
    ['job:snoozed', ours('snoozed')],
    ['job:cancelled', ours('cancelled')],
  ] as const satisfies readonly (readonly [keyof SluiceEventMap, (event: { workerId: string }) => void])[];
  for (const [event, listener] of listeners) sluice.events.on(event, listener);
  const deadline = Date.now() + timeoutMs;
  try {
    await worker.start();
    for (;;) {
      await sleep(CHECK_MS * (0.75 + Math.random() / 2));
      const left = worker.inFlight > 0 ? null : await dueOrRunning(sluice, queues);
      if (left === 0) break;
      if (Date.now() >= deadline) {
        await worker.forceStop();
        throw new SluiceError(
          'SLUICE_TESTING_DRAIN_TIMEOUT',
          `drainQueues: ${queues.join(', ')} not idle after ${timeoutMs} ms (${left ?? 'some'} job(s) waiting or running; so far ${JSON.stringify(counts)})`,
        );
      }
    }
    await worker.stop();
    return { ...counts };
  } finally {
    if (worker.state === 'running') await worker.forceStop();
    for (const [event, listener] of listeners) sluice.events.off(event, listener);
  }
}

/** Jobs of the queues that are due and free, or claimed: one bounded depth read (each count stops at 1,000). */
async function dueOrRunning(sluice: Sluice, queues: readonly string[]): Promise<number> {
  const depths = await sluice.queues.depth({ queues: [...queues], max: 1_000 });
  return depths.reduce((sum, d) => sum + d.ready.count + d.running.count, 0);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
