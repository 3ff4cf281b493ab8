import { EventEmitter } from 'node:events';
import type { MaintenancePass, SkippedRelease } from './task/MaintenanceTask.ts';

/** A queue's promise and what the maintenance pass read of the queue (src/maintenance/checkQueues.ts). */
interface PromiseReading {
  readonly queue: string;
  /** The promise: a ready job starts within this long (ms), or null. */
  readonly startWithinMs: number | null;
  /** The promise: at most this many jobs ready, or null. */
  readonly maxReady: number | null;
  /** The oldest ready job's wait (ms, DB clock) when read, or null when none was ready. */
  readonly oldestReadyMs: number | null;
  /** Jobs ready when read (`exact: false`: at least this many). */
  readonly ready: { readonly count: number; readonly exact: boolean };
}

/** A promised queue fell behind its promise: reported once, when its state changed. */
export interface PromiseBroken extends PromiseReading {
  /** What was broken: the oldest ready job waited too long (`startWithin`), too many are ready (`maxReady`). */
  readonly breaches: readonly ('startWithin' | 'maxReady')[];
}

/** A broken promise is kept again: reported once, when its state changed. */
export interface PromiseKept extends PromiseReading {
  /** How long it was broken (DB clock). */
  readonly brokenForMs: number;
}

/**
 * What sluice reports while it works. Business code emits; the log subscriber (logging.ts) and
 * any application listener read the same events. Names are `noun:verb`, past tense.
 */
export interface SluiceEventMap {
  'batch:enqueued': { batchId: number | null; count: number; chunks: number; durationMs: number };
  /** Jobs dropped at enqueue because another job of their throttle key took the window (JobSpec.throttle). */
  'enqueue:throttled': { count: number };
  'job:claimed': { workerId: string; lockId: string; queue: string; count: number; strategy: string };
  'job:completed': { workerId: string; jobId: number; name: string; queue: string; durationMs: number };
  'job:failed': { workerId: string; jobId: number; name: string; queue: string; error: Error; attempt: number };
  'job:retried': { workerId: string; jobId: number; name: string; delayMs: number; retryTimes: number };
  /** Dead-lettered; `error` is the last attempt's (RetriesExhaustedError when it was not run again). */
  'job:dead': { workerId: string; jobId: number; name: string; queue: string; error: Error };
  'job:cancelled': { workerId: string; jobId: number; name: string; queue: string; durationMs: number };
  /** A handler's result was not JSON as given (a NaN, a Map: docs/jobs.md, Payloads) or over maxResultBytes: not kept, and the job still succeeds. */
  'result:dropped': { workerId: string; jobId: number; name: string; queue: string; reason: string };
  /** A ctx.progress value was not JSON as given or over 4 KiB: not kept, and the attempt goes on. */
  'progress:dropped': { workerId: string; jobId: number; name: string; queue: string; reason: string };
  /**
   * An exactly-once job's transaction met a transient conflict (a deadlock, a lock-wait timeout, a
   * Galera certification failure) on every one of its re-runs: its claim was given back, due at
   * once, retry_times unchanged — a conflict is never a failed attempt.
   */
  /** The handler snoozed (ctx.snooze, RateLimitedError): released for `delayMs`, no attempt counted; `pausedQueue`: its queue paused as long. */
  'job:snoozed': {
    workerId: string;
    jobId: number;
    name: string;
    queue: string;
    delayMs: number;
    pausedQueue: boolean;
    durationMs: number;
  };
  /**
   * Claimed jobs this worker has no handler for (`names`: their job names) were given back at once,
   * due again in `delayMs`, no attempt spent; `firstSeen`: one of the names is new to this worker.
   */
  'job:unknown': {
    workerId: string;
    queue: string;
    names: readonly string[];
    jobIds: readonly number[];
    delayMs: number;
    firstSeen: boolean;
  };
  'job:conflicted': { workerId: string; jobId: number; name: string; queue: string; runs: number; error: Error };
  'claim:lost': { workerId: string; operation: string; lockId: string; jobIds: readonly number[]; lost: number };
  /** `jobsFolder`: the absolute folder the handlers came from (null for a list of definitions); `jobs`: their names. */
  'worker:started': {
    workerId: string;
    queues: readonly string[];
    concurrency: number;
    strategy: string;
    jobsFolder: string | null;
    jobs: readonly string[];
  };
  'worker:stopping': { workerId: string; inFlight: number };
  'worker:stopped': { workerId: string; released: number; processed: number };
  'worker:error': { workerId: string; error: Error; context: string };
  /**
   * The wake-up path failed (a worker's doorbell connection, or an enqueuer's ring): jobs still
   * start, at the next poll. `context` says which side and step.
   */
  'doorbell:error': { error: Error; context: string };
  'worker:concurrency': { workerId: string; from: number; to: number; cpu: number; freeMem: number };
  'batch:finished': { holder: string; batchId: number; completionJob: boolean };
  'schedule:enqueued': { name: string; slot: string; jobId: number; duplicate: boolean };
  /** `scheduled`: the recurring job definitions this process enqueues, from `jobsFolder` (null: a list, or none). */
  'maintenance:started': { holder: string; schedule: string; jobsFolder: string | null; scheduled: readonly string[] };
  'leader:acquired': { holder: string; lease: string };
  /** `released`: this process gave the lease up as it stopped (not lost to an error or another holder). */
  'leader:lost': { holder: string; lease: string; released: boolean };
  'maintenance:completed': { holder: string } & MaintenancePass;
  'maintenance:error': { holder: string; error: Error; context: string };
  /** Claims a release left alone because another transaction holds their rows; tried again next pass. */
  'maintenance:skipped': { holder: string } & SkippedRelease;
  /** A queue fell behind its promise (sluice.queues.setPromise), as the maintenance leader read it. Once per breach. */
  'promise:broken': { holder: string } & PromiseBroken;
  /** A broken promise is kept again. Once per breach. */
  'promise:kept': { holder: string } & PromiseKept;
  /**
   * This process was given a retention (createSluice) while the install stores none: it follows
   * its own, and other processes may follow theirs. Once per value.
   */
  'settings:unshared': { setting: string; given: number };
  /** An operator stored a setting that differs from the one this running process was given: it follows the stored one. */
  'settings:overridden': { setting: string; given: number; stored: number };
}

export type SluiceEventName = keyof SluiceEventMap;
type Listener<K extends SluiceEventName> = (payload: SluiceEventMap[K]) => void;

/** A typed event bus. A throwing listener is reported on `console.error`-free stderr via the bus itself, never to the emitter. */
export class SluiceEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    this.#emitter.setMaxListeners(100);
  }

  /** Calls `listener` with each event of this name (the names and payloads: docs/jobs.md "Events"). */
  on<K extends SluiceEventName>(event: K, listener: Listener<K>): this {
    this.#emitter.on(event, listener);
    return this;
  }

  /** Removes a listener added with `on`. */
  off<K extends SluiceEventName>(event: K, listener: Listener<K>): this {
    this.#emitter.off(event, listener);
    return this;
  }

  /**
   * Emits without letting a faulty listener break the queue's own work.
   * @internal sluice's own: an application listens, it does not emit.
   */
  emit<K extends SluiceEventName>(event: K, payload: SluiceEventMap[K]): void {
    for (const listener of this.#emitter.listeners(event) as Listener<K>[]) {
      try {
        listener(payload);
      } catch (error) {
        process.emitWarning(`sluice: listener of ${event} threw: ${String(error)}`);
      }
    }
  }

  /** How many listeners this event has. */
  listenerCount(event: SluiceEventName): number {
    return this.#emitter.listenerCount(event);
  }
}
