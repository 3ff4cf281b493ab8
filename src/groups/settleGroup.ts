import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { valuesTable } from '../db/valuesTable.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/** Held jobs one settle releases at most (a bounded statement); reconcileGroups releases the rest. */
export const RELEASE_PAGE = 1_000;

/**
 * A fair window is refilled once its group's live jobs are at most this share of it. Lower: fewer,
 * bigger releases; higher: more slack for the settle's own latency (a worker settles after its
 * interval, and a loaded host stretches each settle to tens or hundreds of ms), during which the
 * group's workers drain what is left of the window. Three quarters: a dominant group costs one
 * release per quarter window (125 jobs by default) and keeps a quarter window in hand meanwhile.
 */
const REFILL_BELOW = 3 / 4;

/** Groups of one queue one statement of a settle names at most (its lock, its read, its count). */
export const GROUPS_PER_STATEMENT = 500;

/** The lock wait bound of the settle's locking statements: MariaDB SET STATEMENT (MySQL 8: the SET_VAR hint). */
const LOCK_WAIT = '/*M!100300 SET STATEMENT innodb_lock_wait_timeout = 2 FOR */';

/**
 * Params: (group, limit given or NULL) for each of `n` groups, then ?1 queue. Creates the groups'
 * rows that are missing, writes the limit a job or an operator gave (NULL: the row's stays), and
 * locks the rows for the rest of the transaction, in group order: every change of a group's slots
 * takes its row in turn. The lock wait is bounded at 2 s (MariaDB SET STATEMENT; MySQL 8 SET_VAR,
 * not run here: only MariaDB 10.11 runs on this machine); a timeout (1205) re-runs the transaction.
 */
const sqlLockGroups = (t: Tables, n: number) => `
${LOCK_WAIT}
INSERT /*+ SET_VAR(innodb_lock_wait_timeout = 2) */ INTO ${t.jobGroups} (queue, group_key, concurrency_limit, active, updated_at)
SELECT q.queue, v.group_key, v.given, 0, NOW(3)
FROM (${valuesTable(['group_key', 'given'], n)}) v
JOIN (SELECT ? AS queue) q
ORDER BY v.group_key
ON DUPLICATE KEY UPDATE concurrency_limit = IF(v.given IS NULL, concurrency_limit, v.given)`;

/**
 * Params: ?1 queue, ?2 groups (list). The locked rows' limit in force — its own, else the queue's
 * default group concurrency, else the queue's fair window (all NULL: none) —, whether that is the
 * fair window (a soft bound), and the slots taken. Primary-key probes.
 */
const sqlReadGroups = (t: Tables) => `
SELECT g.group_key,
       COALESCE(g.concurrency_limit, q.group_concurrency, q.fair_window) AS effective_limit,
       g.concurrency_limit IS NULL AND q.group_concurrency IS NULL AND q.fair_window IS NOT NULL AS fair,
       g.active
FROM ${t.jobGroups} g
LEFT JOIN ${t.queues} q ON q.queue = g.queue
WHERE g.queue = ?
  AND g.group_key IN (?)`;

/**
 * Params: (queue, group, skip, count) for each of `n` groups. Each group's next held jobs, in the
 * order they start: priority, then intended run_at, then id — `count` entries of its range of
 * ix_group after the first `skip`, locked; one bounded range read per group, in one statement. A hold row an enqueue has
 * not committed yet is waited for at most 2 s (as the groups' lock): that enqueue locks its group's
 * row next, which the server then sees as a deadlock and breaks at once.
 */
const sqlNextHeld = (t: Tables, n: number) =>
  `${LOCK_WAIT}\n${Array.from(
    { length: n },
    (_, i) => `(SELECT ${i === 0 ? '/*+ SET_VAR(innodb_lock_wait_timeout = 2) */ ' : ''}job_id, group_key
FROM ${t.jobHolds}
WHERE queue = ?
  AND group_key = ?
ORDER BY priority, run_at, job_id
LIMIT ?, ?
FOR UPDATE)`,
  ).join('\nUNION ALL\n')}`;

/**
 * Params: ?1 queue, ?2 groups (list). Which of the groups have held jobs: one entry of ix_group per
 * group (a loose scan of its prefix). Not locking: a hold an enqueue has not committed yet is
 * settled by that enqueue, which locks its group's row after this transaction.
 */
const sqlWithHeld = (t: Tables) => `
SELECT DISTINCT group_key
FROM ${t.jobHolds}
WHERE queue = ?
  AND group_key IN (?)`;

/**
 * Params: ?1 ids (list, locked holds). Releases held jobs: run_at from the sentinel back to their
 * intended time, or now if that has passed (a released job of a big group queues behind what other
 * groups enqueued meanwhile). Fenced on the sentinel and a free row. Returns affectedRows = released.
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs} j
JOIN ${t.jobHolds} h ON h.job_id = j.id
SET j.run_at = GREATEST(h.run_at, NOW(3))
WHERE j.id IN (?)
  AND j.run_at = '${HELD_RUN_AT}'
  AND j.lock_id = ''`;

/**
 * Params: ?1 ids (list). Of the jobs a release did not all reach (affectedRows short: some are
 * gone), those still live: each takes its group's slot (released now, or live and not held).
 */
const sqlLive = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
  AND run_at <> '${HELD_RUN_AT}'`;

/** Params: ?1 ids (list). Their holds are over (released, or their job is gone). */
const sqlDropHolds = (t: Tables) => `
DELETE FROM ${t.jobHolds}
WHERE job_id IN (?)`;

/**
 * Params: (group, active) for each of `n` groups, then ?1 queue, ?2 the groups (list). The groups'
 * slots taken, after the change, and when they last moved (a group whose row does not move for a
 * while is one reconcileGroups recounts). A CASE over the keys, in the column's own collation, and
 * the rows found by primary key.
 */
const sqlSetActive = (t: Tables, n: number) => `
UPDATE ${t.jobGroups}
SET active = CASE group_key ${Array.from({ length: n }, () => 'WHEN ? THEN ?').join(' ')} ELSE active END,
    updated_at = NOW(3)
WHERE queue = ?
  AND group_key IN (?)`;

/** A change to one group's slots, inside the caller's transaction. */
export interface GroupChange {
  readonly queue: string;
  readonly group: string;
  /** Slots given back: the group's jobs that left the live table while holding one. */
  readonly freed: number;
  /** A concurrency limit to write onto the group (a job's or an operator's), or null to keep the row's. */
  readonly limit: number | null;
}

/**
 * The one place a group's slots change: locks the group's row (creating it), counts the freed slots
 * off, then releases the group's next held jobs while it has room under its limit in force (no
 * limit: up to RELEASE_PAGE, as the jobs were held under a limit since removed), each released job
 * taking a slot. A freed slot thus passes to the next held job with the row unchanged. Returns how
 * many jobs it released (the caller rings the queue after the commit). settleGroups with one group.
 */
export async function settleGroup(tx: Executor, tables: Tables, change: GroupChange): Promise<number> {
  return (await settleGroups(tx, tables, [change])).get(change.queue) ?? 0;
}

/**
 * settleGroup for many groups at once, in few statements whatever their number: per queue and
 * GROUPS_PER_STATEMENT groups, one locking INSERT of their rows (in group order, so two
 * transactions never lock two rows crosswise), one read of them, one read of the next held jobs of
 * those with room (which of them have held jobs, one entry each; then one bounded ix_group range per
 * such group, their rooms adding up to at most RELEASE_PAGE jobs a statement), one UPDATE that
 * releases them and one DELETE of their holds, and one UPDATE of the rows that moved. A completion
 * of 20 jobs of 20 groups costs at most seven statements, as one of one group does. Returns the
 * jobs released per queue.
 *
 * A fair window (no concurrency limit in force) is a soft bound that only keeps one group from
 * flooding the claim's head range, so it is refilled with hysteresis: nothing is released while the
 * group still has more than REFILL_BELOW of its window live, and then it is refilled to the whole
 * window in one page. A dominant group thus costs one release per quarter window, not one per job; its
 * completions settle lazily, after their commit (src/worker/FairGroupSettler.ts).
 */
export async function settleGroups(
  tx: Executor,
  tables: Tables,
  changes: readonly GroupChange[],
): Promise<Map<string, number>> {
  const merged = new Map<string, GroupChange>();
  for (const change of changes) {
    const key = `${change.queue}\u0000${change.group}`;
    const earlier = merged.get(key);
    merged.set(
      key,
      earlier ? { ...change, freed: earlier.freed + change.freed, limit: change.limit ?? earlier.limit } : change,
    );
  }
  const released = new Map<string, number>();
  const sorted = [...merged.keys()].sort().map((key) => merged.get(key) as GroupChange);
  for (let i = 0; i < sorted.length; ) {
    const queue = (sorted[i] as GroupChange).queue;
    const chunk: GroupChange[] = [];
    while (i < sorted.length && sorted[i]?.queue === queue && chunk.length < GROUPS_PER_STATEMENT)
      chunk.push(sorted[i++] as GroupChange);
    const n = await settleChunk(tx, tables, queue, chunk);
    if (n > 0) released.set(queue, (released.get(queue) ?? 0) + n);
  }
  return released;
}

interface GroupRow {
  group_key: string;
  effective_limit: number | string | null;
  fair: number | string | null;
  active: number | string;
}

/** settleGroups for up to GROUPS_PER_STATEMENT groups of one queue. */
async function settleChunk(
  tx: Executor,
  tables: Tables,
  queue: string,
  chunk: readonly GroupChange[],
): Promise<number> {
  const groups = chunk.map((c) => c.group);
  await tx.write(sqlLockGroups(tables, chunk.length), [...chunk.flatMap((c) => [c.group, c.limit]), queue]);
  const rows = new Map(
    (await tx.select<GroupRow>(sqlReadGroups(tables), [queue, groups])).map((r) => [r.group_key, r] as const),
  );
  const plans = chunk.map((change) => {
    const row = rows.get(change.group);
    const was = Number(row?.active ?? 0);
    const active = Math.max(0, was - change.freed);
    const ceiling = row?.effective_limit == null ? null : Number(row.effective_limit);
    const refill = ceiling === null || Number(row?.fair) !== 1 || active <= ceiling * REFILL_BELOW;
    const room = !refill ? 0 : ceiling === null ? RELEASE_PAGE : Math.min(RELEASE_PAGE, ceiling - active);
    return { change, was, active, room, released: 0 };
  });
  const byGroup = new Map(plans.map((p) => [p.change.group, p] as const));
  const held = await nextHeld(tx, tables, queue, plans);
  if (held.length > 0) {
    const ids = held.map((h) => h.id);
    const { affectedRows } = await tx.write(sqlRelease(tables), [ids]);
    const live =
      affectedRows === ids.length
        ? null
        : new Set((await tx.select<{ id: number | string }>(sqlLive(tables), [ids])).map((r) => Number(r.id)));
    for (const h of held) {
      const plan = byGroup.get(h.group);
      if (plan && (live === null || live.has(h.id))) plan.released++;
    }
    await tx.write(sqlDropHolds(tables), [ids]);
  }
  const moved = plans.filter((p) => p.active + p.released !== p.was || p.change.freed > 0 || p.released > 0);
  if (moved.length > 0)
    await tx.write(sqlSetActive(tables, moved.length), [
      ...moved.flatMap((p) => [p.change.group, p.active + p.released]),
      queue,
      moved.map((p) => p.change.group),
    ]);
  return plans.reduce((sum, p) => sum + p.released, 0);
}

/**
 * The next held jobs of the groups with room, in bounded statements: of the groups that have held
 * jobs at all, first up to an even share of RELEASE_PAGE each, all in one statement; then, for the
 * groups that filled their share and have room for more, the rest of their room, in statements of
 * at most RELEASE_PAGE jobs. Many groups with a few held jobs each cost one read, as one group does.
 */
async function nextHeld(
  tx: Executor,
  tables: Tables,
  queue: string,
  plans: readonly { change: GroupChange; room: number }[],
): Promise<{ id: number; group: string }[]> {
  const found: { id: number; group: string }[] = [];
  const withRoom = plans.filter((p) => p.room > 0);
  if (withRoom.length === 0) return found;
  // Only the groups that have held jobs get a range read: none, when no group of the change is held back.
  const withHeld = new Set(
    (await tx.select<{ group_key: string }>(sqlWithHeld(tables), [queue, withRoom.map((p) => p.change.group)])).map(
      (r) => r.group_key,
    ),
  );
  const candidates = withRoom.filter((p) => withHeld.has(p.change.group));
  if (candidates.length === 0) return found;
  const share = Math.max(1, Math.floor(RELEASE_PAGE / candidates.length));
  const read = async (parts: readonly { group: string; skip: number; count: number }[]) => {
    if (parts.length === 0) return new Map<string, number>();
    const params = parts.flatMap((p) => [queue, p.group, p.skip, p.count]);
    const rows = await tx.select<{ job_id: number | string; group_key: string }>(
      sqlNextHeld(tables, parts.length),
      params,
    );
    const perGroup = new Map<string, number>();
    for (const r of rows) {
      found.push({ id: Number(r.job_id), group: r.group_key });
      perGroup.set(r.group_key, (perGroup.get(r.group_key) ?? 0) + 1);
    }
    return perGroup;
  };
  const first = await read(candidates.map((p) => ({ group: p.change.group, skip: 0, count: Math.min(p.room, share) })));
  let part: { group: string; skip: number; count: number }[] = [];
  let rows = 0;
  for (const plan of candidates) {
    const got = first.get(plan.change.group) ?? 0;
    if (got < share || plan.room <= share) continue;
    const rest = plan.room - share;
    if (rows + rest > RELEASE_PAGE) {
      await read(part);
      part = [];
      rows = 0;
    }
    part.push({ group: plan.change.group, skip: share, count: rest });
    rows += rest;
  }
  await read(part);
  return found;
}
