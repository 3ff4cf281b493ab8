import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { settleGroup } from '../groups/settleGroup.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import { GROUP_FLAGS } from '../model/jobFlags.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';

/**
 * Params: ?1 after queue, ?2 the same, ?3 after group, ?4 quiet ms, ?5 limit. One page of groups
 * (primary-key order, after the cursor) whose row has not changed for `quiet` ms and that holds
 * slots or has jobs held: the groups a lost count could have stuck.
 */
const sqlQuietGroups = (t: Tables) => `
SELECT g.queue, g.group_key
FROM ${t.jobGroups} g
WHERE (g.queue > ? OR (g.queue = ? AND g.group_key > ?))
  AND g.updated_at <= NOW(3) - INTERVAL ? * 1000 MICROSECOND
  AND (g.active > 0 OR EXISTS (SELECT 1 FROM ${t.jobHolds} h WHERE h.queue = g.queue AND h.group_key = g.group_key))
ORDER BY g.queue, g.group_key
LIMIT ?`;

/**
 * Params: ?1 queue, ?2 group. The group's jobs that hold a slot: live, flagged, not held. Reads the
 * queue's range of ix_head (the group has no index on the hot table, so that jobs without a group
 * pay nothing): run only for quiet groups, one at a time.
 */
const sqlLiveInGroup = (t: Tables) => `
SELECT COUNT(*) AS live
FROM ${t.jobs}
WHERE queue = ?
  AND group_key = ?
  AND (flags & ${GROUP_FLAGS}) <> 0
  AND run_at <> '${HELD_RUN_AT}'`;

/** reconcileGroups' options. Every field is optional. */
export interface ReconcileGroupsOptions {
  /** Groups looked at per page. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most pages per pass; the next pass goes on from where this one stopped. @defaultValue 20 */
  readonly maxBatches?: number;
  /** A group is recounted once its row has not changed for this long (a busy group settles itself). @defaultValue 60000 */
  readonly quietMs?: number;
  /** Told of the queues of jobs released (the maintenance process rings their workers). @defaultValue none */
  readonly onReleased?: ((queues: ReadonlyMap<string, number>) => void) | null;
}

export type ResolvedReconcileGroupsOptions = Readonly<Required<ReconcileGroupsOptions>>;

function resolveReconcileGroupsOptions(options: ReconcileGroupsOptions): ResolvedReconcileGroupsOptions {
  const r = {
    batchSize: TASK_DEFAULTS.batchSize,
    maxBatches: TASK_DEFAULTS.maxBatches,
    quietMs: 60_000,
    onReleased: null,
    ...defined(options),
  };
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxBatches', r.maxBatches, 1, 1_000);
  integerIn('quietMs', r.quietMs, 0, 86_400_000);
  return r;
}

/**
 * The backstop of group limits: every path that ends a job of a limited group settles its group in
 * its own transaction, but a job can also leave another way (a row deleted by hand, a fleet
 * mid-upgrade whose old workers know no groups), a limit can be raised for every group at once (the
 * queue's default), and a fair group's completions are settled after their commit by their worker
 * (src/worker/FairGroupSettler.ts): one that dies first leaves the group's count too high, at worst
 * a group with held jobs and none live, which stays so for at most quietMs and a pass. Each
 * pass walks quiet groups in bounded pages (resuming where the last pass stopped) and, one short
 * transaction per group, recounts its slots taken from the live rows under the group's lock and
 * releases its held jobs while it has room: a slot can neither leak nor be counted twice for longer
 * than a pass. Counts: groups recounted, jobs released.
 */
export function reconcileGroups(
  taskDb: TaskDb,
  options: ReconcileGroupsOptions = {},
): MaintenanceTask<'reconcileGroups', 'recounted' | 'released', ResolvedReconcileGroupsOptions> {
  return new GroupReconciler(taskDb, options);
}

class GroupReconciler
  implements MaintenanceTask<'reconcileGroups', 'recounted' | 'released', ResolvedReconcileGroupsOptions>
{
  readonly name = 'reconcileGroups';
  readonly options: ResolvedReconcileGroupsOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  /** Where the walk of job_groups goes on from at the next pass. */
  #after = { queue: '', group: '' };

  constructor({ db, tables }: TaskDb, options: ReconcileGroupsOptions) {
    this.options = resolveReconcileGroupsOptions(options);
    this.#db = db;
    this.#tables = tables;
  }

  async runOnce(): Promise<{ recounted: number; released: number }> {
    const counts = { recounted: 0, released: 0 };
    const { batchSize, maxBatches, quietMs } = this.options;
    const released = new Map<string, number>();
    for (let batch = 0; batch < maxBatches; batch++) {
      const { queue, group } = this.#after;
      const page = await this.#db.select<{ queue: string; group_key: string }>(sqlQuietGroups(this.#tables), [
        queue,
        queue,
        group,
        quietMs,
        batchSize,
      ]);
      for (const row of page) {
        const n = await this.#recount(row.queue, row.group_key);
        counts.recounted++;
        counts.released += n;
        if (n > 0) released.set(row.queue, (released.get(row.queue) ?? 0) + n);
      }
      const last = page[page.length - 1];
      if (last === undefined || page.length < batchSize) {
        this.#after = { queue: '', group: '' };
        break;
      }
      this.#after = { queue: last.queue, group: last.group_key };
    }
    if (released.size > 0) this.options.onReleased?.(released);
    return counts;
  }

  /** One group, in one short transaction (re-run whole after a transient conflict). */
  #recount(queue: string, group: string): Promise<number> {
    const tables = this.#tables;
    return withTransaction(this.#db, (tx) =>
      settleGroup(tx, tables, {
        queue,
        group,
        freed: 0,
        limit: null,
        recount: async (locked) => {
          const [row] = await locked.select<{ live: number | string }>(sqlLiveInGroup(tables), [queue, group]);
          return Number(row?.live ?? 0);
        },
      }),
    );
  }
}
