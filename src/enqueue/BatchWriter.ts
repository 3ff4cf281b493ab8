import type { Executor, WriteResult } from '../db/executor.ts';
import { planCountedChunks, type ServerChunkLimits } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import {
  type KeyedJob,
  keyedInLockOrder,
  keyOf,
  linkIdempotencyKeys,
  reserveIdempotencyKeys,
} from '../idempotency/reserveIdempotencyKeys.ts';
import type { JobSpec } from '../model/job.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import { storedApart } from '../model/storedPayload.ts';
import { type NormalizedJob, validateJob } from '../model/validateJob.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { writeGraphRows } from '../workflows/writeGraph.ts';
import { BatchRules } from './BatchRules.ts';
import { batchRow } from './batchRow.ts';
import { flowAtEnqueue } from './flowAtEnqueue.ts';
import { GroupEntry, type Placement } from './GroupEntry.ts';
import { assertRowFits, columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';
import type { GraphPlan } from './planGraph.ts';
import { ReadBack } from './ReadBack.ts';
import { type ApartPayload, ApartPayloadWrites, apartIdsOf, apartPayload } from './writeApartPayloads.ts';
import { writeBatchMembers } from './writeGroupMembers.ts';

export interface BatchWriteResult {
  /** null when nothing was written (every job a duplicate). */
  readonly batchId: number | null;
  readonly count: number;
  readonly skipped: number;
  /** Jobs dropped because their throttle window was taken. */
  readonly throttled: number;
  readonly chunks: number;
  /** Jobs written per queue: whom to wake once the batch commits. */
  readonly queues: ReadonlyMap<string, number>;
}

/** What one job of a chunk needs beyond its normalized form: its index in the whole batch, its payload stored apart. */
interface Pending {
  readonly job: NormalizedJob;
  readonly index: number;
  readonly apart: ApartPayload | null;
}

/**
 * Writes one batch inside a transaction the caller owns (enqueueBatch's, or the CLI's for a whole
 * NDJSON file), job by job: each job is validated once, as it arrives, and gathered into a chunk
 * bounded by rows and by characters (split by bytes when rendered), so memory holds one chunk
 * however large the payloads. A bad job throws JobValidationError naming
 * its index in the whole batch; the caller's rollback undoes what was written before it.
 * Idempotency keys held by other jobs are skipped and counted.
 *
 * Statements go one at a time: the next chunk is gathered while the previous INSERT runs (a
 * chunk's jobs, then its payloads stored apart), and sent once that succeeded. When the server
 * aborts the transaction (a deadlock, a Galera certification failure, a write-set limit), a
 * statement queued on the connection would run in autocommit and commit part of the batch.
 */
export class BatchWriter {
  #next = 0;
  #count = 0;
  #skipped = 0;
  #throttled = 0;
  #chunks = 0;
  #pending: Pending[] = [];
  #pendingBytes = 0;
  readonly #rules: BatchRules;
  /** Jobs sent per queue (all of them land, or the batch rolls back). */
  readonly #queues = new Map<string, number>();
  /**
   * The INSERT in flight, the rows it must report, (in a graph) the jobs whose ids must be read
   * back, and the payloads of its rows stored apart.
   */
  #inFlight: {
    result: Promise<WriteResult>;
    expected: number;
    indexes: number[] | null;
    payloads: readonly ApartPayload[];
    grouped: boolean;
  } | null = null;
  /** The smallest id the INSERTs settled since the last key reservation reported (where linkIdempotencyKeys looks). */
  #firstId = Number.POSITIVE_INFINITY;
  /** Jobs of limited groups: written held, settled on close. */
  readonly #groups: GroupEntry;
  readonly #readBack: ReadBack;
  /** The payloads stored apart of the INSERTs settled; the last statement stays in flight while the next chunk gathers. */
  readonly #payloads: ApartPayloadWrites;

  private constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
    readonly batchId: number,
    private readonly limits: ServerChunkLimits,
    private readonly maxPayloadBytes: number,
    /** The batch's graph (planGraph), or null: jobs outside any graph are written as before. */
    private readonly graph: GraphPlan | null,
  ) {
    this.#groups = new GroupEntry(tx, tables);
    this.#rules = new BatchRules(graph !== null);
    this.#readBack = new ReadBack(tx, tables, batchId, graph, this.#groups);
    this.#payloads = new ApartPayloadWrites(tx, tables, limits);
  }

  static async open(
    runtime: SluiceRuntime,
    tx: Executor,
    limits: ServerChunkLimits,
    onCompleteJson: string | null,
    graph: GraphPlan | null = null,
    name: string | null = null,
  ): Promise<BatchWriter> {
    const insertId = await batchRow.open(tx, runtime.tables, onCompleteJson, name);
    return new BatchWriter(tx, runtime.tables, insertId, limits, runtime.options.maxPayloadBytes, graph);
  }

  /** Jobs handed to write() so far. */
  get received(): number {
    return this.#next;
  }

  write(specs: Iterable<JobSpec>): Promise<void> {
    return this.#each(specs, (spec, index) => validateJob(spec, index, { maxPayloadBytes: this.maxPayloadBytes }));
  }

  /** As write, for jobs validateJob already checked (a graph's batch: planGraph read them all first). */
  writeValidated(jobs: readonly NormalizedJob[]): Promise<void> {
    return this.#each(jobs, (job) => job);
  }

  async #each<T>(items: Iterable<T>, normalized: (item: T, index: number) => NormalizedJob): Promise<void> {
    try {
      for (const item of items) {
        const index = this.#next++;
        await this.#add(normalized(item, index), index);
      }
    } catch (error) {
      throw await this.#failure(error);
    }
  }

  /**
   * What a failed write reports. The statement still in flight is waited for, nothing more sent;
   * when it failed too (the server aborted the transaction: in a caller's, all of it), that is the
   * error to report: a caller that handles a bad job and carries on would run in autocommit.
   */
  async #failure(error: unknown): Promise<unknown> {
    const inFlight = this.#inFlight;
    this.#inFlight = null;
    try {
      await inFlight?.result;
      await this.#payloads.settle();
    } catch (aborted) {
      return aborted;
    }
    return error;
  }

  async #add(job: NormalizedJob, index: number): Promise<void> {
    this.#rules.check(job, index);
    // Escaped as it arrives: while the previous chunk's payloads are still on their way to the server.
    const apart = storedApart(job.storedPayload) ? apartPayload(job.storedPayload, index, this.limits) : null;
    this.#pending.push({ job, index, apart });
    // Characters, not bytes: a chunk gathers about a statement's worth of typical (mostly ASCII) text;
    // planCountedChunks splits what comes out larger in bytes. Three bytes per character here made
    // kilobyte payloads travel in three times as many statements as they needed.
    this.#pendingBytes +=
      job.storedPayload.length + job.name.length + job.queue.length + (job.idempotencyKey?.length ?? 0) + 64;
    if (this.#pending.length >= this.limits.maxRows || this.#pendingBytes >= this.limits.maxBytes) await this.#flush();
  }

  /**
   * jobs.flags of the job at `index`, and whether it is held: it has parents (all of them live), or
   * its group is limited (GroupEntry; the group's room releases it on close).
   */
  #placementOf(index: number, job: NormalizedJob): Placement {
    const flags = this.graph?.flags.get(index) ?? 0;
    const hasParents = (flags & JOB_FLAGS.hasParents) !== 0;
    const group = this.#groups.placement(job, index, hasParents);
    if (group.held) this.#readBack.holdForGroup(index, job);
    return { flags: flags | group.flags, held: hasParents || group.held };
  }

  /** Writes the gathered jobs: their keys reserved first, then one INSERT per planned statement. */
  async #flush(): Promise<void> {
    const pending = this.#pending;
    if (pending.length === 0) return;
    this.#pending = [];
    this.#pendingBytes = 0;
    await this.#settle();
    const keyed = keyedInLockOrder(pending.map((p) => p.job));
    const reservation =
      keyed.length > 0 ? await reserveIdempotencyKeys(this.tx, this.tables, keyed, this.limits) : null;
    const unique = reservation
      ? pending.filter(({ job }) => job.idempotencyKey === null || reservation.won.has(keyOf(job as KeyedJob)))
      : pending;
    this.#skipped += pending.length - unique.length;
    const flow = await flowAtEnqueue(this.tx, this.tables, unique, this.limits);
    const wanted = flow.kept;
    this.#throttled += flow.throttled;
    this.#firstId = Number.POSITIVE_INFINITY;
    if (wanted.length > 0) {
      await this.#groups.resolve(wanted.map((p) => p.job));
      const places = wanted.map(({ job, index }) => this.#placementOf(index, job));
      wanted.forEach(({ job }, i) => {
        if (!places[i]?.held) this.#queues.set(job.queue, (this.#queues.get(job.queue) ?? 0) + 1);
      });
      const plain = columnsFor(
        wanted.map((p) => p.job),
        this.batchId,
      );
      const columns = { ...plain, flags: this.graph !== null || plain.flags === true };
      const prefix = insertJobsPrefix(this.tables, columns);
      const tuples = wanted.map(({ job, index }, i) => {
        const start = flow.starts?.[i] ?? null;
        // A held job of a rate-limited group keeps its reserved start as the run_at it is released to.
        if (start !== null && this.#readBack.heldForGroup(index))
          this.#readBack.holdForGroup(index, { ...job, runAt: new Date(start.atMs), delayMs: 0 });
        const tuple = renderJobTuple(job, this.batchId, columns, places[i], start);
        assertRowFits(prefix, tuple, index, this.limits.maxStatementBytes);
        return tuple;
      });
      const apart = wanted.map((p) => p.apart);
      let offset = 0;
      for (const chunk of planCountedChunks(prefix, tuples, this.limits)) {
        const rows = wanted.slice(offset, offset + chunk.rows);
        const payloads = apart.slice(offset, offset + chunk.rows).filter((p): p is ApartPayload => p !== null);
        offset += chunk.rows;
        const grouped = flow.starts !== null || rows.some(isGrouped);
        await this.#send(chunk.sql, chunk.rows, this.#readBack.indexesOf(rows), payloads, grouped);
      }
    }
    if (reservation) {
      await this.#settle();
      await linkIdempotencyKeys(this.tx, this.tables, reservation, this.#firstId, this.limits);
    }
  }

  /** Sends one INSERT once the previous one succeeded, and returns without waiting for it. */
  async #send(
    statement: string,
    expected: number,
    indexes: number[] | null,
    payloads: readonly ApartPayload[],
    grouped: boolean,
  ): Promise<void> {
    await this.#settle();
    const result = this.tx.write(statement);
    result.catch(() => undefined); // observed in #settle; never an unhandled rejection meanwhile
    this.#inFlight = { result, expected, indexes, payloads, grouped };
    this.#chunks++;
    // Its payloads go now, the last of their statements left in flight while the next chunk gathers.
    if (payloads.length > 0) await this.#settle(true);
  }

  /**
   * Waits for what is in flight and checks that every row of it landed; then writes the payloads
   * stored apart of the INSERT's rows (found by the batch's id from its first id), all of them
   * settled unless `payloadInFlight` (only #send: nothing else is sent before the next #settle).
   */
  async #settle(payloadInFlight = false): Promise<void> {
    await this.#payloads.settle();
    const inFlight = this.#inFlight;
    if (!inFlight) return;
    this.#inFlight = null;
    const { affectedRows: inserted, insertId } = await inFlight.result;
    this.#firstId = Math.min(this.#firstId, insertId);
    if (inserted !== inFlight.expected) {
      throw new Error(`batch ${this.batchId}: an INSERT wrote ${inserted} of ${inFlight.expected} rows; rolled back`);
    }
    this.#count += inserted;
    if (inFlight.indexes !== null) await this.#readBack.record(insertId, inserted, inFlight.indexes);
    if (inFlight.grouped) await writeBatchMembers(this.tx, this.tables, insertId, this.batchId, inserted);
    if (inFlight.payloads.length === 0) return;
    const ids = await apartIdsOf(this.tx, this.tables, this.batchId, insertId, inFlight.payloads.length);
    await this.#payloads.write(ids, inFlight.payloads);
    if (!payloadInFlight) await this.#payloads.settle();
  }

  async close(): Promise<BatchWriteResult> {
    await this.#flush();
    await this.#settle();
    for (const [queue, n] of await this.#groups.close()) this.#queues.set(queue, (this.#queues.get(queue) ?? 0) + n);
    const counts = { skipped: this.#skipped, throttled: this.#throttled, chunks: this.#chunks };
    if (this.#count === 0) {
      await batchRow.drop(this.tx, this.tables, this.batchId);
      return { batchId: null, count: 0, ...counts, queues: new Map() };
    }
    const graphRows = this.#readBack.graphRows();
    if (graphRows !== null) await writeGraphRows(this.tx, this.tables, graphRows, this.limits);
    await batchRow.close(this.tx, this.tables, this.batchId, this.#count);
    return { batchId: this.batchId, count: this.#count, ...counts, queues: this.#queues };
  }
}

const isGrouped = (p: Pending): boolean => p.job.flow.group !== null;
