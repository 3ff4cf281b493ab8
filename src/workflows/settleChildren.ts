import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/**
 * How a parent left the live table: what its edges record, and what its children see. 'lost': it
 * left without a trace (no dead row, no history row: deleted around sluice), so nothing says it
 * completed; its children treat it as a failed parent.
 */
export type ParentOutcome = 'completed' | 'dead' | 'cancelled' | 'lost';

/** Children are read, counted down and released in pages of this many (bounded statements). */
const PAGE = 1_000;

/**
 * Params: ?1 parent ids (list), ?2 the page size. Locks the pending edges of finished parents, in
 * primary-key order, and returns them: each child, and whether it runs even if this parent failed.
 * The PRIMARY KEY (parent_id, child_id) range of each parent: never a scan.
 */
const sqlPendingEdges = (t: Tables) => `
SELECT parent_id, child_id, continue_on_failure
FROM ${t.jobEdges}
WHERE parent_id IN (?)
  AND parent_outcome IS NULL
ORDER BY parent_id, child_id
LIMIT ?
FOR UPDATE`;

/** Params: ?1 outcome, ?2 parent id, ?3 child ids (list). Records how the parent ended on its edges. */
const sqlRecordOutcome = (t: Tables) => `
UPDATE ${t.jobEdges}
SET parent_outcome = ?
WHERE parent_id = ?
  AND child_id IN (?)`;

/**
 * Params: ?1 parents finished, ?2 child ids (list). Counts finished parents off each child's hold.
 * The hold row's lock serialises two parents finishing at once: the second waits for the first
 * to commit, then counts down from what it left, so exactly one of them sees 0.
 */
const sqlCountDown = (t: Tables) => `
UPDATE ${t.jobHolds}
SET waiting_parents = waiting_parents - ?
WHERE job_id IN (?)`;

/**
 * Params: ?1 child ids (list). The children among them whose last parent just finished: their hold
 * rows, already locked by the count-down (by primary key; the jobs rows are locked only by the
 * release itself, so a concurrent completion never waits on a child's job row it has no business with).
 */
const sqlReady = (t: Tables) => `
SELECT job_id
FROM ${t.jobHolds}
WHERE job_id IN (?)
  AND reason = 'parents'
  AND waiting_parents = 0
FOR UPDATE`;

/** Params: ?1 child ids (list, just released). Their queues, with how many each: whom to wake. */
const sqlQueuesOf = (t: Tables) => `
SELECT queue, COUNT(*) AS n
FROM ${t.jobs}
WHERE id IN (?)
GROUP BY queue`;

/**
 * Params: ?1 child ids (list). Releases held children: run_at from the sentinel back to their
 * intended time, or now if that has passed. Fenced on the sentinel and a free row: returns
 * affectedRows = the children released (a child no longer held is not touched).
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs} j
JOIN ${t.jobHolds} h ON h.job_id = j.id
SET j.run_at = GREATEST(h.run_at, NOW(3))
WHERE j.id IN (?)
  AND j.run_at = '${HELD_RUN_AT}'
  AND j.lock_id = ''`;

/** Params: ?1 child ids (list). Their holds are over. */
const sqlDropHolds = (t: Tables) => `
DELETE FROM ${t.jobHolds}
WHERE job_id IN (?)`;

/** What settling finished parents did to their children. */
export interface Settled {
  /** Children released (now claimable), per queue: whom to wake after the commit. */
  readonly released: Map<string, number>;
  /** Children that must be cancelled: a parent failed and their edge from it does not continue on failure. */
  readonly doomed: Map<number, string>;
}

/**
 * Records on their edges that parents left the live table, inside the transaction that removes
 * them (completion, dead-lettering, cancel). A child's failed parent on an edge without
 * continueOnFailure dooms it (the caller cancels it, naming the parent); every other finished
 * parent counts down the child's hold, and the children whose count reached 0 are released with
 * one fenced UPDATE and their hold rows deleted. Bounded: pages of PAGE edges, each by primary
 * key; the transaction grows with the parents' fan-out, never with the jobs table.
 */
export async function settleChildren(
  tx: Executor,
  tables: Tables,
  parentIds: readonly number[],
  outcome: ParentOutcome,
): Promise<Settled> {
  const settled: Settled = { released: new Map(), doomed: new Map() };
  if (parentIds.length === 0) return settled;
  for (;;) {
    const edges = await tx.select<{
      parent_id: number | string;
      child_id: number | string;
      continue_on_failure: number;
    }>(sqlPendingEdges(tables), [parentIds, PAGE]);
    if (edges.length === 0) return settled;
    const byParent = new Map<number, number[]>();
    const countDown = new Map<number, number>();
    for (const edge of edges) {
      const parent = Number(edge.parent_id);
      const child = Number(edge.child_id);
      byParent.set(parent, [...(byParent.get(parent) ?? []), child]);
      if (outcome !== 'completed' && Number(edge.continue_on_failure) === 0) {
        if (!settled.doomed.has(child)) settled.doomed.set(child, doomReason(parent, outcome));
      } else countDown.set(child, (countDown.get(child) ?? 0) + 1);
    }
    for (const [parent, children] of byParent) await tx.write(sqlRecordOutcome(tables), [outcome, parent, children]);
    await release(tx, tables, countDown, settled);
    if (edges.length < PAGE) return settled;
  }
}

/** Counts the finished parents off each child's hold (grouped by how many), then releases those at 0. */
async function release(
  tx: Executor,
  tables: Tables,
  countDown: Map<number, number>,
  settled: Settled,
  counted: readonly number[] = [],
): Promise<void> {
  const byCount = new Map<number, number[]>();
  for (const [child, n] of countDown) {
    if (settled.doomed.has(child)) continue;
    byCount.set(n, [...(byCount.get(n) ?? []), child]);
  }
  if (byCount.size === 0 && counted.length === 0) return;
  for (const [n, children] of byCount) await tx.write(sqlCountDown(tables), [n, children]);
  const candidates = [...countDown.keys(), ...counted];
  const ready = await tx.select<{ job_id: number | string }>(sqlReady(tables), [candidates]);
  if (ready.length === 0) return;
  const ids = ready.map((r) => Number(r.job_id));
  await tx.write(sqlRelease(tables), [ids]);
  await tx.write(sqlDropHolds(tables), [ids]);
  const queues = await tx.select<{ queue: string; n: number | string }>(sqlQueuesOf(tables), [ids]);
  for (const q of queues) settled.released.set(q.queue, (settled.released.get(q.queue) ?? 0) + Number(q.n));
}

/**
 * Params: ?1 child ids (list). Sets the count of held children to 0, for a release the edges say
 * is due (the reconciler). Returns affectedRows = the holds matched.
 */
const sqlClearCount = (t: Tables) => `
UPDATE ${t.jobHolds}
SET waiting_parents = 0
WHERE job_id IN (?)`;

/** Releases held children whose edges show no parent left to wait for (the reconciler's repair). Returns their queues. */
export async function releaseWaitingForNobody(
  tx: Executor,
  tables: Tables,
  childIds: readonly number[],
): Promise<Map<string, number>> {
  const settled: Settled = { released: new Map(), doomed: new Map() };
  if (childIds.length === 0) return settled.released;
  await tx.write(sqlClearCount(tables), [childIds]);
  await release(tx, tables, new Map(), settled, childIds);
  return settled.released;
}

/** Why a child is cancelled when `parent` ended with a failed `outcome`: its last error, after "cancelled: ". */
export function doomReason(parent: number, outcome: ParentOutcome): string {
  return `parent job ${parent} ${outcome === 'dead' ? 'died' : outcome === 'lost' ? 'was lost' : outcome}`;
}
