import { EventEmitter } from 'node:events';

/**
 * What sluice reports while it works. Business code emits; the log subscriber (logging.ts) and
 * any application listener read the same events. Names are `noun:verb`, past tense.
 */
export interface SluiceEventMap {
  'batch:enqueued': { batchId: number | null; count: number; chunks: number; durationMs: number };
  'job:claimed': { workerId: string; lockId: string; queue: string; count: number; strategy: string };
  'job:completed': { workerId: string; jobId: number; name: string; queue: string; durationMs: number };
  'job:failed': { workerId: string; jobId: number; name: string; queue: string; error: Error; attempt: number };
  'job:retried': { workerId: string; jobId: number; name: string; delayMs: number; retryTimes: number };
  'job:dead': { workerId: string; jobId: number; name: string; queue: string; error: string };
  'claim:lost': { workerId: string; operation: string; lockId: string; jobIds: readonly number[]; lost: number };
  'worker:started': { workerId: string; queues: readonly string[]; concurrency: number; strategy: string };
  'worker:stopping': { workerId: string; inFlight: number };
  'worker:stopped': { workerId: string; released: number; processed: number };
  'worker:error': { workerId: string; error: Error; context: string };
  'worker:concurrency': { workerId: string; from: number; to: number; cpu: number; freeMem: number };
  'batch:finished': { holder: string; batchId: number; completionJob: boolean };
  'schedule:enqueued': { name: string; slot: string; jobId: number; duplicate: boolean };
  'leader:acquired': { holder: string; lease: string };
  'leader:lost': { holder: string; lease: string };
  'sweep:completed': {
    holder: string;
    leader: boolean;
    released: number;
    deadLettered: number;
    batchesFinished: number;
    keysPruned: number;
    workersRemoved: number;
    deadWorkerClaims: number;
    historyPruned: number;
    deadPruned: number;
    durationMs: number;
  };
  'maintenance:error': { holder: string; error: Error; context: string };
}

export type SluiceEventName = keyof SluiceEventMap;
type Listener<K extends SluiceEventName> = (payload: SluiceEventMap[K]) => void;

/** A typed event bus. A throwing listener is reported on `console.error`-free stderr via the bus itself, never to the emitter. */
export class SluiceEvents {
  readonly #emitter = new EventEmitter({ captureRejections: false });

  constructor() {
    this.#emitter.setMaxListeners(100);
  }

  on<K extends SluiceEventName>(event: K, listener: Listener<K>): this {
    this.#emitter.on(event, listener);
    return this;
  }

  off<K extends SluiceEventName>(event: K, listener: Listener<K>): this {
    this.#emitter.off(event, listener);
    return this;
  }

  /** Emits without letting a faulty listener break the queue's own work. */
  emit<K extends SluiceEventName>(event: K, payload: SluiceEventMap[K]): void {
    for (const listener of this.#emitter.listeners(event) as Listener<K>[]) {
      try {
        listener(payload);
      } catch (error) {
        process.emitWarning(`sluice: listener of ${event} threw: ${String(error)}`);
      }
    }
  }

  listenerCount(event: SluiceEventName): number {
    return this.#emitter.listenerCount(event);
  }
}
