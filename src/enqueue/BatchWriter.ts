import type { Executor, WriteResult } from '../db/executor.ts';
import { planCountedChunks, type ServerChunkLimits } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';
import {
  type KeyedJob,
  keyOf,
  linkIdempotencyKeys,
  reserveIdempotencyKeys,
} from '../idempotency/reserveIdempotencyKeys.ts';
import type { JobSpec } from '../model/job.ts';
import { type NormalizedJob, validateJob } from '../model/validateJob.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';
import { storedApart } from './payloadApart.ts';
import { type ApartPayload, apartIdsOf, apartPayload, writeApartPayloads } from './writeApartPayloads.ts';

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
  /** Jobs written per queue: whom to wake once the batch commits. */
  readonly queues: ReadonlyMap<string, number>;
}

/** What one job of a chunk needs beyond its normalized form: its index in the whole batch. */
interface Pending {
  readonly job: NormalizedJob;
  readonly index: number;
}

/**
 * Writes one batch inside a transaction the caller owns (enqueueBatch's, or the CLI's for a whole
 * NDJSON file), job by job: each job is validated once, as it arrives, and gathered into a chunk
 * bounded by rows and by bytes (a job's escaped size is at most three bytes per character), so
 * memory holds one chunk however large the payloads. A bad job throws JobValidationError naming
 * its index in the whole batch; the caller's rollback undoes what was written before it.
 * Idempotency keys held by other jobs are skipped and counted.
 *
 * Statements go one at a time: the next chunk is rendered while the previous INSERT runs, but it
 * is sent only once that INSERT succeeded. When the server aborts the transaction (a deadlock, a
 * Galera certification failure, a write-set limit), a statement already queued on the connection
 * would run in autocommit and commit part of the batch.
 */
export class BatchWriter {
  #next = 0;
  #count = 0;
  #skipped = 0;
  #chunks = 0;
  #pending: Pending[] = [];
  #pendingBytes = 0;
  /** Every (queue, key) of this batch so far: a key repeated inside one batch is an error. */
  readonly #keys = new Set<string>();
  /** Jobs sent per queue (all of them land, or the batch rolls back). */
  readonly #queues = new Map<string, number>();
  /** The INSERT in flight, the rows it must report, and the payloads of its rows stored apart. */
  #inFlight: { result: Promise<WriteResult>; expected: number; payloads: readonly ApartPayload[] } | null = null;
  /** The smallest id the INSERTs settled since the last key reservation reported (where linkIdempotencyKeys looks). */
  #firstId = Number.POSITIVE_INFINITY;

  private constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
    readonly batchId: number,
    private readonly limits: ServerChunkLimits,
    private readonly maxPayloadBytes: number,
  ) {}

  static async open(
    runtime: SluiceRuntime,
    tx: Executor,
    limits: ServerChunkLimits,
    onCompleteJson: string | null,
  ): Promise<BatchWriter> {
    const { insertId } = await tx.write(sqlOpenBatch(runtime.tables), [onCompleteJson]);
    return new BatchWriter(tx, runtime.tables, insertId, limits, runtime.options.maxPayloadBytes);
  }

  /** Jobs handed to write() so far. */
  get received(): number {
    return this.#next;
  }

  async write(specs: Iterable<JobSpec>): Promise<void> {
    for (const spec of specs) {
      const index = this.#next++;
      const job = validateJob(spec, index, { maxPayloadBytes: this.maxPayloadBytes });
      if (job.idempotencyKey !== null) {
        const key = keyOf({ queue: job.queue, idempotencyKey: job.idempotencyKey });
        if (this.#keys.has(key)) {
          throw new JobValidationError(
            index,
            'idempotencyKey',
            `repeats a key used earlier in this batch (${job.idempotencyKey})`,
          );
        }
        this.#keys.add(key);
      }
      this.#pending.push({ job, index });
      this.#pendingBytes +=
        3 * (job.payload.length + job.name.length + job.queue.length + (job.idempotencyKey?.length ?? 0)) + 64;
      if (this.#pending.length >= this.limits.maxRows || this.#pendingBytes >= this.limits.maxBytes)
        await this.#flush();
    }
  }

  /** Writes the gathered jobs: their keys reserved first, then one INSERT per planned statement. */
  async #flush(): Promise<void> {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#settle();
    const keyed = pending
      .map((p) => p.job)
      .filter((j): j is NormalizedJob & { idempotencyKey: string } => j.idempotencyKey !== null)
      // One global order: concurrent batches then lock keys in the same order and never deadlock on them.
      .sort((a, b) => (a.queue === b.queue ? compare(a.idempotencyKey, b.idempotencyKey) : compare(a.queue, b.queue)));
    const reservation =
      keyed.length > 0 ? await reserveIdempotencyKeys(this.tx, this.tables, keyed, this.limits) : null;
    const wanted = reservation
      ? pending.filter(({ job }) => job.idempotencyKey === null || reservation.won.has(keyOf(job as KeyedJob)))
      : pending;
    this.#skipped += pending.length - wanted.length;
    this.#firstId = Number.POSITIVE_INFINITY;
    if (wanted.length > 0) {
      for (const { job } of wanted) this.#queues.set(job.queue, (this.#queues.get(job.queue) ?? 0) + 1);
      const columns = columnsFor(
        wanted.map((p) => p.job),
        this.batchId,
      );
      const prefix = insertJobsPrefix(this.tables, columns);
      const tuples = wanted.map(({ job, index }) => {
        const tuple = renderJobTuple(job, this.batchId, columns);
        const bytes = Buffer.byteLength(prefix) + Buffer.byteLength(tuple);
        if (bytes > this.limits.maxStatementBytes) {
          throw new JobValidationError(
            index,
            'payload',
            `is ${bytes} bytes once escaped for the server, over its max_allowed_packet (${this.limits.maxStatementBytes} usable)`,
          );
        }
        return tuple;
      });
      const apart = wanted.map(({ job, index }) =>
        storedApart(job.payload) ? apartPayload(job.payload, index, this.limits) : null,
      );
      let offset = 0;
      for (const chunk of planCountedChunks(prefix, tuples, this.limits)) {
        const payloads = apart.slice(offset, offset + chunk.rows).filter((p): p is ApartPayload => p !== null);
        offset += chunk.rows;
        await this.#send(chunk.sql, chunk.rows, payloads);
      }
    }
    if (reservation) {
      await this.#settle();
      await linkIdempotencyKeys(this.tx, this.tables, reservation, this.#firstId, this.limits);
    }
  }

  /** Sends one INSERT once the previous one succeeded, and returns without waiting for it. */
  async #send(statement: string, expected: number, payloads: readonly ApartPayload[]): Promise<void> {
    await this.#settle();
    const result = this.tx.write(statement);
    result.catch(() => undefined); // observed in #settle; never an unhandled rejection meanwhile
    this.#inFlight = { result, expected, payloads };
    this.#chunks++;
  }

  /**
   * Waits for the INSERT in flight and checks that every row of it landed; then writes the
   * payloads of its rows stored apart (found by the batch's id from the INSERT's first id).
   */
  async #settle(): Promise<void> {
    const inFlight = this.#inFlight;
    if (!inFlight) return;
    this.#inFlight = null;
    const { affectedRows: inserted, insertId } = await inFlight.result;
    this.#firstId = Math.min(this.#firstId, insertId);
    if (inserted !== inFlight.expected) {
      throw new Error(`batch ${this.batchId}: an INSERT wrote ${inserted} of ${inFlight.expected} rows; rolled back`);
    }
    this.#count += inserted;
    if (inFlight.payloads.length === 0) return;
    const ids = await apartIdsOf(this.tx, this.tables, this.batchId, insertId, inFlight.payloads.length);
    await writeApartPayloads(this.tx, this.tables, ids, inFlight.payloads, this.limits);
  }

  async close(): Promise<BatchWriteResult> {
    await this.#flush();
    await this.#settle();
    if (this.#count === 0) {
      await this.tx.write(sqlDropBatch(this.tables), [this.batchId]);
      return { batchId: null, count: 0, skipped: this.#skipped, chunks: this.#chunks, queues: new Map() };
    }
    await this.tx.write(sqlCloseBatch(this.tables), [this.#count, this.batchId]);
    return {
      batchId: this.batchId,
      count: this.#count,
      skipped: this.#skipped,
      chunks: this.#chunks,
      queues: this.#queues,
    };
  }
}

/** Binary order, as utf8mb4_bin sorts the primary key. */
function compare(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
