import type { SluiceEvents } from '../events.ts';
import type { Job } from '../model/job.ts';
import type { LoadReading } from './hostLoad.ts';
import { OTHER_NAME } from './metricsSnapshot.ts';
import { MAX_COUNTED_QUEUES, WorkerCounters } from './WorkerCounters.ts';
import { WORKER_DEFAULTS } from './workerOptions.ts';
import { type QueueCounters, UNKNOWN_NAMES_MAX, type UnknownJobName } from './workerRegistry.ts';

/**
 * Everything one worker reports, one method per event: each event of a worker is emitted from
 * exactly one place, here, and the counts its registry row carries (failed attempts, per-queue
 * totals, the metrics' counters and histograms) are kept by the same calls, so they cannot drift
 * from the events.
 */
export class WorkerEvents {
  #failed = 0;
  readonly #perQueue = new Map<string, QueueCounters>();
  readonly #unknown = new Map<string, { name: string; queue: string; givenBack: number }>();

  constructor(
    private readonly events: SluiceEvents,
    readonly workerId: string,
    /** The metrics' counters and histograms (per queue and name), carried by the heartbeat. */
    readonly counters = new WorkerCounters(WORKER_DEFAULTS.metricsMaxNames),
  ) {}

  /** Attempts that failed (retried, dead-lettered or dropped), and jobs dead-lettered without running. */
  get failed(): number {
    return this.#failed;
  }

  /** Per queue: completed jobs, failed attempts, dead-lettered jobs, jobs cancelled while running, snoozes. */
  perQueue(): Record<string, QueueCounters> {
    return Object.fromEntries([...this.#perQueue].map(([queue, c]) => [queue, { ...c }]));
  }

  started(
    queues: readonly string[],
    concurrency: number,
    strategy: string,
    jobsFolder: string | null,
    jobs: readonly string[],
  ): void {
    this.events.emit('worker:started', { workerId: this.workerId, queues, concurrency, strategy, jobsFolder, jobs });
  }

  stopping(inFlight: number): void {
    this.events.emit('worker:stopping', { workerId: this.workerId, inFlight });
  }

  stopped(released: number, processed: number): void {
    this.events.emit('worker:stopped', { workerId: this.workerId, released, processed });
  }

  /** One claim round trip to `queue`: the jobs it claimed (none: an empty claim), each with how long it had been due. */
  claimRound(queue: string, jobs: readonly { readonly name: string; readonly waitedMs: number | null }[]): void {
    this.counters.claimed(queue, jobs);
  }

  claimed(lockId: string, queue: string, count: number, strategy: string): void {
    this.events.emit('job:claimed', { workerId: this.workerId, lockId, queue, count, strategy });
  }

  completed(job: Job, durationMs: number): void {
    this.#count(job.queue, 'completed');
    this.counters.outcome(job.queue, job.name, 'completed', durationMs);
    const { id: jobId, name, queue } = job;
    this.events.emit('job:completed', { workerId: this.workerId, jobId, name, queue, durationMs });
  }

  /**
   * An attempt failed, `durationMs` after its claim; `retried` or `dead` follows with what became
   * of the job (at-most-once: nothing).
   */
  failedAttempt(job: Job, error: Error, attempt: number, durationMs?: number): void {
    this.#failed++;
    this.#count(job.queue, 'failed');
    this.counters.outcome(job.queue, job.name, 'failed', durationMs);
    const { id: jobId, name, queue } = job;
    this.events.emit('job:failed', { workerId: this.workerId, jobId, name, queue, error, attempt });
  }

  retried(job: Job, delayMs: number, retryTimes: number): void {
    this.counters.outcome(job.queue, job.name, 'retried');
    this.events.emit('job:retried', { workerId: this.workerId, jobId: job.id, name: job.name, delayMs, retryTimes });
  }

  /** Dead-lettered; `ranNow` false when it was dead-lettered without running (its retries ran out before). */
  dead(job: Job, error: Error, ranNow: boolean): void {
    if (!ranNow) this.#failed++;
    this.#count(job.queue, 'dead');
    this.counters.outcome(job.queue, job.name, 'dead');
    const { id: jobId, name, queue } = job;
    this.events.emit('job:dead', { workerId: this.workerId, jobId, name, queue, error });
  }

  /** The job was cancelled while this worker ran it; its handler's outcome was discarded. */
  cancelled(job: Job, durationMs: number): void {
    this.#count(job.queue, 'cancelled');
    this.counters.outcome(job.queue, job.name, 'cancelled', durationMs);
    const { id: jobId, name, queue } = job;
    this.events.emit('job:cancelled', { workerId: this.workerId, jobId, name, queue, durationMs });
  }

  /** The handler's return value could not be kept (too big, or not JSON as given); the job still succeeds. */
  resultDropped(job: Job, reason: string): void {
    const { id: jobId, name, queue } = job;
    this.events.emit('result:dropped', { workerId: this.workerId, jobId, name, queue, reason });
  }

  /** A progress value could not be kept (too big, or not JSON as given); the attempt goes on. */
  progressDropped(job: Job, reason: string): void {
    const { id: jobId, name, queue } = job;
    this.events.emit('progress:dropped', { workerId: this.workerId, jobId, name, queue, reason });
  }

  /** Every run of an exactly-once transaction conflicted: given back uncounted (not a failed attempt). */
  conflicted(job: Job, runs: number, error: Error): void {
    const { id: jobId, name, queue } = job;
    this.events.emit('job:conflicted', { workerId: this.workerId, jobId, name, queue, runs, error });
  }

  /** The handler snoozed: released for `delayMs` without counting an attempt; `pausedQueue`: its queue paused as long. */
  snoozed(job: Job, delayMs: number, pausedQueue: boolean, durationMs: number): void {
    this.#count(job.queue, 'snoozed');
    const { id: jobId, name, queue } = job;
    this.events.emit('job:snoozed', { workerId: this.workerId, jobId, name, queue, delayMs, pausedQueue, durationMs });
  }

  /**
   * Claimed jobs this worker has no handler for were given back (ClaimLoop), due again in
   * `delayMs`, no attempt spent. Their names are kept for the heartbeat (unknownNames: at most
   * UNKNOWN_NAMES_MAX, the first ones seen; the event still reports the others).
   */
  unknownJobs(queue: string, jobs: readonly { readonly id: number; readonly name: string }[], delayMs: number): void {
    const names = [...new Set(jobs.map((j) => j.name))];
    let firstSeen = false;
    for (const name of names) {
      const seen = this.#unknown.get(name);
      if (!seen) firstSeen = true;
      if (seen) seen.givenBack += jobs.filter((j) => j.name === name).length;
      else if (this.#unknown.size < UNKNOWN_NAMES_MAX)
        this.#unknown.set(name, { name, queue, givenBack: jobs.filter((j) => j.name === name).length });
    }
    const jobIds = jobs.map((j) => Number(j.id));
    this.events.emit('job:unknown', { workerId: this.workerId, queue, names, jobIds, delayMs, firstSeen });
  }

  /** The job names this worker gave back for want of a handler (the first UNKNOWN_NAMES_MAX), with how many jobs of each. */
  unknownNames(): UnknownJobName[] {
    return [...this.#unknown.values()].map((u) => ({ ...u }));
  }

  claimLost(operation: string, lockId: string, jobIds: readonly number[], lost: number): void {
    this.events.emit('claim:lost', { workerId: this.workerId, operation, lockId, jobIds, lost });
  }

  concurrency(from: number, to: number, load: LoadReading): void {
    this.events.emit('worker:concurrency', { workerId: this.workerId, from, to, cpu: load.cpu, freeMem: load.freeMem });
  }

  error(error: unknown, context: string): void {
    this.events.emit('worker:error', { workerId: this.workerId, error: error as Error, context });
  }

  #count(queue: string, field: keyof QueueCounters): void {
    // Bounded like the metrics (WorkerCounters): past MAX_COUNTED_QUEUES queues the rest count as one.
    const key = this.#perQueue.has(queue) || this.#perQueue.size < MAX_COUNTED_QUEUES ? queue : OTHER_NAME;
    const counts = this.#perQueue.get(key) ?? { completed: 0, failed: 0, dead: 0, cancelled: 0, snoozed: 0 };
    counts[field]++;
    this.#perQueue.set(key, counts);
  }
}
