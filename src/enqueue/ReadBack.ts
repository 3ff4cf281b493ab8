import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import type { GraphRows } from '../workflows/writeGraph.ts';
import { batchRow } from './batchRow.ts';
import type { GroupEntry } from './GroupEntry.ts';
import { type GraphPlan, graphRowsOf } from './planGraph.ts';

/**
 * The jobs of a batch whose ids are read back once their INSERT settled: a graph's jobs (their
 * edges name ids) and jobs written held for a limited group (each gets a hold row under its id).
 */
export class ReadBack {
  /** In a graph: the id of every job with parents or dependents, by index in the batch. */
  readonly #ids = new Map<number, number>();
  /** In a graph: each written job, by index, for its hold row. */
  readonly #graphJobs = new Map<number, NormalizedJob>();
  /** Jobs written held for their group whose ids are still to be read, by index in the batch. */
  readonly #groupHeld = new Map<number, NormalizedJob>();

  constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
    private readonly batchId: number,
    private readonly graph: GraphPlan | null,
    private readonly groups: GroupEntry,
  ) {}

  /** Job `index` is written held for its group, and released later as `job` (with its reserved start, if any). */
  holdForGroup(index: number, job: NormalizedJob): void {
    this.#groupHeld.set(index, job);
  }

  heldForGroup(index: number): boolean {
    return this.#groupHeld.has(index);
  }

  /** The indexes of a statement's rows in order, or null when none of them is in the graph or held for its group. */
  indexesOf(rows: readonly { readonly job: NormalizedJob; readonly index: number }[]): number[] | null {
    const graph = this.graph;
    const inGraph = graph !== null && rows.some((p) => graph.flags.has(p.index));
    if (!inGraph && !rows.some((p) => this.#groupHeld.has(p.index))) return null;
    if (graph !== null) for (const p of rows) if (graph.flags.has(p.index)) this.#graphJobs.set(p.index, p.job);
    return rows.map((p) => p.index);
  }

  /** After the INSERT of `indexes` settled: their ids read back and kept, and a hold row for each held one. */
  async record(insertId: number, inserted: number, indexes: readonly number[]): Promise<void> {
    const rows = await batchRow.idsWritten(this.tx, this.tables, this.batchId, insertId, inserted);
    for (const [i, index] of indexes.entries()) {
      if (this.graph?.flags.has(index)) this.#ids.set(index, Number(rows[i]));
      const held = this.#groupHeld.get(index);
      if (held === undefined) continue;
      this.#groupHeld.delete(index);
      await this.groups.hold(Number(rows[i]), held);
    }
  }

  /** The graph's rows (edges and holds) by the ids read back; null outside a graph. */
  graphRows(): GraphRows | null {
    return this.graph === null ? null : graphRowsOf(this.graph, this.#ids, this.#graphJobs);
  }
}
