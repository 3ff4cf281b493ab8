import type { SluiceContext } from '../context.ts';
import { retryTransient } from '../db/transaction.ts';
import { ClaimLostError } from '../errors.ts';
import type { Job } from '../types.ts';
import { completeJobs, completeStillHeld } from './completeJobs.ts';
import { expireIdempotencyKeys } from './expireIdempotencyKeys.ts';

interface Finished {
  readonly job: Job;
  readonly durationMs: number;
}

/**
 * Batches successful completions: jobs that finish close together are deleted with one fenced
 * statement per claim, instead of one commit per job (which caps a 2-core host near 1,000
 * jobs/s). A flush starts on the next turn of the event loop after the first finish; finishes
 * that arrive while it runs go into the next one.
 */
export class CompletionBuffer {
  #pending = new Map<string, Finished[]>();
  #size = 0;
  #flushing: Promise<void> | null = null;

  constructor(
    private readonly ctx: SluiceContext,
    private readonly workerId: string,
    /** Called after each write: a claim loop held back by the backlog may go on. */
    private readonly onWritten: () => void,
  ) {}

  /** Jobs finished but not yet deleted. */
  get backlog(): number {
    return this.#size;
  }

  add(job: Job, durationMs: number): void {
    const group = this.#pending.get(job.lockId);
    if (group) group.push({ job, durationMs });
    else this.#pending.set(job.lockId, [{ job, durationMs }]);
    this.#size++;
    this.#flushing ??= this.#flushLoop();
  }

  /** Resolves once every completion added so far is written (or reported as failed). */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  async #flushLoop(): Promise<void> {
    try {
      await new Promise((resolve) => setImmediate(resolve));
      while (this.#pending.size > 0) {
        const groups = this.#pending;
        this.#pending = new Map();
        await Promise.all([...groups].map(([lockId, finished]) => this.#flushGroup(lockId, finished)));
      }
    } finally {
      this.#flushing = null;
    }
  }

  async #flushGroup(lockId: string, finished: Finished[]): Promise<void> {
    const ids = finished.map((f) => f.job.id);
    try {
      const history = this.ctx.options.historyRetentionMs > 0;
      const lostIds = await this.#complete(lockId, ids, history);
      const completed = lostIds.length === 0 ? finished : finished.filter((f) => !lostIds.includes(f.job.id));
      if (lostIds.length > 0) {
        this.ctx.events.emit('claim:lost', { workerId: this.workerId, operation: 'complete', lockId, jobIds: lostIds, lost: lostIds.length });
      }
      const keyed = completed.filter((f) => f.job.idempotencyKey !== null).map((f) => f.job.id);
      if (keyed.length > 0) await expireIdempotencyKeys(this.ctx.db, this.ctx.tables, keyed, this.ctx.options.idempotencyRetentionMs);
      for (const { job, durationMs } of completed) {
        this.ctx.events.emit('job:completed', { workerId: this.workerId, jobId: job.id, name: job.name, queue: job.queue, durationMs });
      }
    } catch (error) {
      if (error instanceof ClaimLostError) {
        this.ctx.events.emit('claim:lost', { workerId: this.workerId, operation: 'complete', lockId, jobIds: ids, lost: error.lost });
      } else {
        // The claims stay ours until they expire; the sweeper then hands the jobs out again (at-least-once).
        this.ctx.events.emit('worker:error', { workerId: this.workerId, error: error as Error, context: `completing ${ids.length} job(s) of ${lockId}` });
      }
    } finally {
      this.#size -= finished.length;
      this.onWritten();
    }
  }

  /**
   * Completes one claim's finished jobs; returns the ids whose claim was lost. With history a lost
   * job rolls the whole statement back, so the jobs still held are completed on their own. Without
   * history the held ones are already deleted and the lost ones are not known apart: ClaimLostError
   * is thrown on, and all are reported.
   */
  async #complete(lockId: string, ids: number[], history: boolean): Promise<number[]> {
    try {
      await retryTransient(() => completeJobs(this.ctx.db, this.ctx.tables, lockId, ids, { history }));
      return [];
    } catch (error) {
      if (!(error instanceof ClaimLostError) || !history) throw error;
      return retryTransient(() => completeStillHeld(this.ctx.db, this.ctx.tables, lockId, ids));
    }
  }
}
