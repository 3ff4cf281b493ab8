import type { Executor } from '../db/executor.ts';
import type { ChunkLimits } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { reserveThrottleKeys } from '../idempotency/reserveThrottleKeys.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import { type GroupStart, reserveGroupStarts } from '../queues/reserveGroupStarts.ts';

/** What the flow control of some jobs decided: which are written, and when a rated group's jobs start. */
export interface FlowAtEnqueue<T> {
  /** The jobs to write, in order (the throttled ones left out). */
  readonly kept: readonly T[];
  /** Jobs dropped because their throttle window was taken. */
  readonly throttled: number;
  /** Per kept job, the start its group set and whether the group is rated, or null: its own run_at. */
  readonly starts: readonly (GroupStart | null)[] | null;
}

/**
 * Inside the enqueue's transaction, before the jobs' INSERT: drops the jobs whose throttle window
 * is taken, then reserves the starts of the jobs of rate-limited groups. Jobs that name neither a
 * throttle nor a group cost nothing: no statement, and `kept` is the list given.
 */
export async function flowAtEnqueue<T extends { readonly job: NormalizedJob }>(
  tx: Executor,
  tables: Tables,
  pending: readonly T[],
  limits: ChunkLimits,
): Promise<FlowAtEnqueue<T>> {
  let kept = pending;
  let throttled = 0;
  if (pending.some((p) => p.job.flow.throttle !== null)) {
    const candidates = pending.filter((p) => p.job.flow.throttle !== null);
    const windows = candidates.map((p) => ({
      queue: p.job.queue,
      ...(p.job.flow.throttle as { key: string; windowMs: number }),
    }));
    const { took } = await reserveThrottleKeys(tx, tables, windows, limits);
    const lost = new Set(candidates.filter((_, i) => !took.has(i)));
    kept = pending.filter((p) => !lost.has(p));
    throttled = lost.size;
  }
  if (!kept.some((p) => p.job.flow.group !== null)) return { kept, throttled, starts: null };
  const grouped = kept.filter((p) => p.job.flow.group !== null);
  const starts = await reserveGroupStarts(
    tx,
    tables,
    grouped.map(({ job }) => ({
      queue: job.queue,
      group: job.flow.group as string,
      rate: job.flow.groupRate,
      runAt: job.runAt,
      delayMs: job.delayMs,
    })),
    limits,
  );
  const byJob = new Map(grouped.map((p, i) => [p, starts[i] ?? null]));
  return { kept, throttled, starts: kept.map((p) => byJob.get(p) ?? null) };
}
