import type { SluiceContext } from '../context.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';
import type { JobSpec } from '../types.ts';
import { columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';
import { planCountedChunks, type ChunkLimits } from './planChunks.ts';
import { keyOf, linkIdempotencyKeys, reserveIdempotencyKeys } from './reserveIdempotencyKeys.ts';
import { validateJob, type NormalizedJob } from './validateJob.ts';

/** Params: ?1 completion job (JSON) or NULL. Returns insertId = the new batch's id; its size is set on close. */
const sqlOpenBatch = (t: Tables) => `
INSERT INTO ${t.batches} (size, on_complete, created_at)
VALUES (0, ?, NOW(3))`;

/** Params: ?1 size, ?2 batch id. */
const sqlCloseBatch = (t: Tables) => `
UPDATE ${t.batches}
SET size = ?
WHERE id = ?`;

/** Params: ?1 batch id. A batch that received no job (all duplicates) leaves no row. */
const sqlDropBatch = (t: Tables) => `
DELETE FROM ${t.batches}
WHERE id = ?`;

export interface BatchWriteResult {
  /** null when nothing was written (every job a duplicate). */
  readonly batchId: number | null;
  readonly count: number;
  readonly skipped: number;
  readonly chunks: number;
}

/**
 * Writes one batch, slice by slice, inside a transaction the caller owns (enqueueBatch's, or the
 * CLI's for a whole NDJSON file): memory holds one slice. Each slice is validated before any of
 * it is written; an error names the job's index in the whole batch, and the caller's rollback
 * undoes every earlier slice. Idempotency keys held by other jobs are skipped and counted.
 */
export class BatchWriter {
  #next = 0;
  #count = 0;
  #skipped = 0;
  #chunks = 0;
  /** The INSERT in flight and the rows it must report: awaited only once the next chunk is rendered. */
  #inFlight: { result: Promise<number>; expected: number } | null = null;

  private constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
    readonly batchId: number,
    private readonly limits: ChunkLimits,
    private readonly maxPayloadBytes: number,
  ) {}

  static async open(ctx: SluiceContext, tx: Executor, limits: ChunkLimits, onCompleteJson: string | null): Promise<BatchWriter> {
    const { insertId } = await tx.write(sqlOpenBatch(ctx.tables), [onCompleteJson]);
    return new BatchWriter(tx, ctx.tables, insertId, limits, ctx.options.maxPayloadBytes);
  }

  /** Jobs handed to write() so far. */
  get received(): number {
    return this.#next;
  }

  async write(specs: readonly JobSpec[]): Promise<void> {
    const base = this.#next;
    this.#next += specs.length;
    const jobs = specs.map((spec, i) => validateJob(spec, base + i, { maxPayloadBytes: this.maxPayloadBytes }));
    const keyed = jobs.filter((j): j is NormalizedJob & { idempotencyKey: string } => j.idempotencyKey !== null);
    assertNoRepeatedKey(jobs, base);
    // Keys in one global order: concurrent batches then lock them in the same order and never deadlock on them.
    keyed.sort((a, b) => (a.queue === b.queue ? compare(a.idempotencyKey, b.idempotencyKey) : compare(a.queue, b.queue)));
    const reservation = keyed.length > 0 ? await reserveIdempotencyKeys(this.tx, this.tables, keyed, this.limits) : null;
    const wanted = reservation ? jobs.filter((j) => j.idempotencyKey === null || reservation.won.has(keyOf(j as { queue: string; idempotencyKey: string }))) : jobs;
    const columns = columnsFor(wanted, this.batchId);
    const tuples = wanted.map((j) => renderJobTuple(j, this.batchId, columns));
    for (const chunk of planCountedChunks(insertJobsPrefix(this.tables, columns), tuples, this.limits)) {
      await this.#send(chunk.sql, chunk.rows);
    }
    if (reservation) {
      await this.#settle();
      await linkIdempotencyKeys(this.tx, this.tables, reservation.owner);
    }
    this.#skipped += jobs.length - wanted.length;
  }

  /**
   * Queues one INSERT on the transaction's connection and returns once the previous one is done:
   * the caller renders the next chunk while the server executes this one (two cores, both busy).
   */
  async #send(statement: string, expected: number): Promise<void> {
    const result = this.tx.write(statement).then((r) => r.affectedRows);
    result.catch(() => undefined); // observed below; never an unhandled rejection meanwhile
    await this.#settle();
    this.#inFlight = { result, expected };
    this.#chunks++;
  }

  /** Waits for the INSERT in flight and checks that every row of it landed. */
  async #settle(): Promise<void> {
    const inFlight = this.#inFlight;
    if (!inFlight) return;
    this.#inFlight = null;
    const inserted = await inFlight.result;
    if (inserted !== inFlight.expected) throw new Error(`batch ${this.batchId}: an INSERT wrote ${inserted} of ${inFlight.expected} rows; rolled back`);
    this.#count += inserted;
  }

  async close(): Promise<BatchWriteResult> {
    await this.#settle();
    if (this.#count === 0) {
      await this.tx.write(sqlDropBatch(this.tables), [this.batchId]);
      return { batchId: null, count: 0, skipped: this.#skipped, chunks: this.#chunks };
    }
    await this.tx.write(sqlCloseBatch(this.tables), [this.#count, this.batchId]);
    return { batchId: this.batchId, count: this.#count, skipped: this.#skipped, chunks: this.#chunks };
  }
}

/** Binary order, as utf8mb4_bin sorts the primary key. */
function compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

function assertNoRepeatedKey(jobs: readonly NormalizedJob[], base: number): void {
  const seen = new Set<string>();
  jobs.forEach((job, i) => {
    if (job.idempotencyKey === null) return;
    const key = keyOf({ queue: job.queue, idempotencyKey: job.idempotencyKey });
    if (seen.has(key)) throw new JobValidationError(base + i, 'idempotencyKey', `repeats a key used earlier in this batch (${job.idempotencyKey})`);
    seen.add(key);
  });
}
