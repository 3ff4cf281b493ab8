import { isConnectionLoss } from '../db/mysqlErrors.ts';
import { chunkLimitsFor } from '../db/planChunks.ts';
import { withTransaction } from '../db/transaction.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { ringAfterCommit } from '../wakeups/ringAfterCommit.ts';
import { columnsFor, insertJobsPrefix, renderJobTuple } from './jobInsert.ts';

/** The most jobs one coalesced commit carries; the rest go in the next one. */
export const MAX_ROWS = 500;

/** MariaDB hands back the ids of a multi-row INSERT's rows, in their order. */
const RETURNING = ' RETURNING id';

/** What a caller gets: its job's id (enqueueJob's EnqueueResult, of a job no key or flow control can drop). */
export interface Written {
  readonly id: number;
  readonly duplicate: boolean;
}

/** One job's own write, as when it comes alone: what a lone job and a job split out of a failed commit go through. */
export type WriteAlone = (job: NormalizedJob) => Promise<Written>;

interface Waiting {
  readonly job: NormalizedJob;
  readonly resolve: (result: Written) => void;
  readonly reject: (error: unknown) => void;
}

/** One coalescer per install (its runtime), made on its first coalesced enqueue. */
const coalescers = new WeakMap<SluiceRuntime, EnqueueCoalescer>();

export function coalescerOf(runtime: SluiceRuntime, alone: WriteAlone): EnqueueCoalescer {
  let coalescer = coalescers.get(runtime);
  if (coalescer === undefined) {
    coalescer = new EnqueueCoalescer(runtime, alone);
    coalescers.set(runtime, coalescer);
  }
  return coalescer;
}

/**
 * Group commit for the single enqueue outside a caller's transaction: the jobs of calls that arrive
 * while a commit of this process is under way wait for it, then go out together as one multi-row
 * INSERT in one commit (with an SDK, each row carries its trace context). A call that finds no
 * commit under way goes at once (after the calls of the same tick: one microtask), alone, by the
 * one-job path (WriteAlone: one prepared autocommit INSERT): a lone caller waits for nothing more
 * than before. One commit at a time per install: while it runs, the next one forms.
 *
 * Each caller gets its own id, and its acknowledgement only once its job's commit returned. The ids
 * of a multi-row INSERT are never computed from its first id and a count (an increment of a Galera
 * node, MySQL 8's interleaved auto-increment with INSERT … SELECT running): MariaDB returns them
 * (RETURNING id, in the order of the rows); MySQL, which has no RETURNING, gets one INSERT per job
 * (each its insertId) in the one transaction: one commit still, more statements.
 *
 * A commit the server refused (an error of a statement: nothing of it was written) is split: each of
 * its jobs goes again alone, and fails or succeeds alone. A commit whose outcome is unknown (the
 * connection lost) is never re-run: every caller of it gets the error, as a lone caller would.
 */
export class EnqueueCoalescer {
  readonly #runtime: SluiceRuntime;
  readonly #alone: WriteAlone;
  #waiting: Waiting[] = [];
  #busy = false;

  constructor(runtime: SluiceRuntime, alone: WriteAlone) {
    this.#runtime = runtime;
    this.#alone = alone;
  }

  /** Writes `job` (its trace context, if any, in its row) in the next commit; resolves once that commit returned. */
  write(job: NormalizedJob): Promise<Written> {
    return new Promise<Written>((resolve, reject) => {
      this.#waiting.push({ job, resolve, reject });
      if (!this.#busy) {
        this.#busy = true;
        queueMicrotask(() => void this.#drain());
      }
    });
  }

  /** Commits what waits, one commit at a time, until nothing waits. Never throws: each caller gets its outcome. */
  async #drain(): Promise<void> {
    try {
      while (this.#waiting.length > 0) {
        const taken = this.#waiting.splice(0, MAX_ROWS);
        if (taken.length === 1) await this.#writeAlone(taken[0] as Waiting);
        else await this.#writeTogether(taken);
      }
    } finally {
      this.#busy = false;
    }
  }

  async #writeAlone(entry: Waiting): Promise<void> {
    try {
      entry.resolve(await this.#alone(entry.job));
    } catch (error) {
      entry.reject(error);
    }
  }

  /** Several jobs: in commits of at most the server's chunk bytes each (one, but for rows of many kilobytes). */
  async #writeTogether(entries: readonly Waiting[]): Promise<void> {
    let plan: { prefix: string; chunks: { entries: Waiting[]; tuples: string[] }[] };
    try {
      plan = await this.#plan(entries);
    } catch (error) {
      for (const entry of entries) entry.reject(error);
      return;
    }
    for (const chunk of plan.chunks) {
      if (chunk.entries.length === 1) await this.#writeAlone(chunk.entries[0] as Waiting);
      else await this.#writeChunk(plan.prefix, chunk.entries, chunk.tuples);
    }
  }

  /** The INSERT's prefix, and the jobs' rows rendered and cut into statements within the server's chunk bytes. */
  async #plan(entries: readonly Waiting[]) {
    const info = await this.#runtime.serverInfo();
    const { maxBytes } = chunkLimitsFor(info.maxAllowedPacket, MAX_ROWS);
    const columns = columnsFor(
      entries.map((e) => e.job),
      null,
    );
    const prefix = insertJobsPrefix(this.#runtime.tables, columns);
    const base = Buffer.byteLength(prefix) + RETURNING.length;
    const chunks: { entries: Waiting[]; tuples: string[] }[] = [];
    let bytes = Number.POSITIVE_INFINITY;
    for (const entry of entries) {
      const tuple = renderJobTuple(entry.job, null, columns);
      const size = Buffer.byteLength(tuple) + 1;
      if (bytes + size > maxBytes) {
        chunks.push({ entries: [], tuples: [] });
        bytes = base;
      }
      const chunk = chunks[chunks.length - 1] as { entries: Waiting[]; tuples: string[] };
      chunk.entries.push(entry);
      chunk.tuples.push(tuple);
      bytes += size;
    }
    return { prefix, chunks };
  }

  async #writeChunk(prefix: string, entries: readonly Waiting[], tuples: readonly string[]): Promise<void> {
    let ids: number[];
    try {
      ids = await this.#commit(prefix, entries, tuples);
    } catch (error) {
      if (!refusedWhole(error)) {
        for (const entry of entries) entry.reject(error);
        return;
      }
      // Nothing of it was written: each job again, alone, in turn (its own outcome).
      for (const entry of entries) await this.#writeAlone(entry);
      return;
    }
    const queues = new Map<string, number>();
    for (const { job } of entries) queues.set(job.queue, (queues.get(job.queue) ?? 0) + 1);
    ringAfterCommit(this.#runtime, undefined, queues);
    for (const [i, entry] of entries.entries()) entry.resolve({ id: ids[i] as number, duplicate: false });
  }

  /** The jobs' rows (their trace contexts in them) in one commit; their ids, in `entries`' order. */
  async #commit(prefix: string, entries: readonly Waiting[], tuples: readonly string[]): Promise<number[]> {
    const { db } = this.#runtime;
    if ((await this.#runtime.serverInfo()).flavor === 'mariadb') {
      // The one statement is the commit (autocommit).
      const sql = `${prefix}${tuples.join(',')}${RETURNING}`;
      return idsOf(await db.select<{ id: number | string }>(sql), entries.length);
    }
    return withTransaction(db, async (tx) => {
      const ids: number[] = [];
      for (const tuple of tuples) ids.push((await tx.write(prefix + tuple)).insertId);
      return ids;
    });
  }
}

function idsOf(rows: readonly { id: number | string }[], expected: number): number[] {
  if (rows.length !== expected) throw new Error(`the INSERT of ${expected} jobs returned ${rows.length} ids`);
  return rows.map((r) => Number(r.id));
}

/**
 * True when the server answered the commit with an error of one of its statements: it wrote
 * nothing, and each job may go again alone. Not when the connection was lost (the commit's
 * outcome may be unknown: re-running could write a job twice) nor when nothing reached the
 * server (no errno: a pool that gave no connection would give none to each job either).
 */
function refusedWhole(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' && !isConnectionLoss(error);
}
