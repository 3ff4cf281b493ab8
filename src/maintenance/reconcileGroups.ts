import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { applyRecount, countSlotsPage } from '../groups/recountGroup.ts';
import { defined, integerIn } from '../options.ts';
import { type MaintenanceTask, TASK_DEFAULTS, type TaskDb } from '../task/MaintenanceTask.ts';
import { StepBudget } from './StepBudget.ts';

/**
 * Params: ?1 quiet ms, ?2 after queue, ?3 the same, ?4 after group, ?5 limit. The next `limit`
 * groups in primary-key order after the cursor (rows read: the page, and one probe of job_holds'
 * ix_group per group), each with its row's `active` and `updated_at`, whether the row has not
 * changed for `quiet` ms, and whether the group has jobs held.
 */
const sqlGroupsPage = (t: Tables) => `
SELECT p.queue, p.group_key, p.active, p.updated_at,
       p.updated_at <= NOW(3) - INTERVAL ? * 1000 MICROSECOND AS quiet_for,
       EXISTS (SELECT 1 FROM ${t.jobHolds} h WHERE h.queue = p.queue AND h.group_key = p.group_key) AS has_holds
FROM (
  SELECT queue, group_key, active, updated_at
  FROM ${t.jobGroups}
  WHERE queue > ? OR (queue = ? AND group_key > ?)
  ORDER BY queue, group_key
  LIMIT ?
) p
ORDER BY p.queue, p.group_key`;

/** reconcileGroups' options. Every field is optional. */
export interface ReconcileGroupsOptions {
  /** Rows per statement: groups read per page, and members of one group counted per page. @defaultValue 500 */
  readonly batchSize?: number;
  /**
   * Most pages per pass (of groups, or of one group's members); the next pass goes on from where
   * this one stopped. @defaultValue 200
   */
  readonly maxBatches?: number;
  /** How long one pass keeps reading pages; the next pass goes on from where this one stopped. @defaultValue 1,000 */
  readonly budgetMs?: number;
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
    budgetMs: 1_000,
    quietMs: 60_000,
    onReleased: null,
    ...defined(options),
  };
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('maxBatches', r.maxBatches, 1, 1_000);
  integerIn('budgetMs', r.budgetMs, 1, 600_000);
  integerIn('quietMs', r.quietMs, 0, 86_400_000);
  return r;
}

/** One page of job_groups as the walk uses it. */
interface GroupsPage {
  /** Its quiet groups not counted yet, in key order. */
  readonly quiet: Counting[];
  /** Where the walk goes on once they are: after the page's last group, or from the first after the last page. */
  readonly next: { readonly queue: string; readonly group: string };
  /** The page reached the end of job_groups. */
  readonly last: boolean;
}

/** A quiet group being counted: where its count has got to, and how its row read when the count began. */
interface Counting {
  readonly queue: string;
  readonly group: string;
  readonly active: number;
  readonly updatedAt: Date;
  /** It had jobs held when its page was read. */
  readonly holds: boolean;
  afterJobId: number;
  taken: number;
}

/**
 * The backstop of group limits: every path that ends a job of a limited group settles its group in
 * its own transaction, but a job can also leave another way (a row deleted by hand, a fleet
 * mid-upgrade whose old workers know no groups), a limit can be raised for every group at once (the
 * queue's default), and a fair group's completions are settled after their commit by their worker
 * (src/worker/FairGroupSettler.ts): one that dies first leaves the group's count too high, at worst
 * a group with held jobs and none live, which stays so for at most quietMs and a few passes.
 *
 * Each pass walks job_groups in primary-key order from where the last pass stopped, a page of
 * `batchSize` rows per statement, and recounts each quiet group: its slots taken counted from its
 * members (job_group_members, a page of `batchSize` per statement, each member looked up in jobs by
 * primary key: rows read grow with the group, never with the jobs table), without any lock; then
 * one short transaction writes the count only if the group's row has not moved since the count
 * began (src/groups/recountGroup.ts) and releases its held jobs while it has room (a count that
 * agrees, of a group with nothing held, writes nothing). A group that moved meanwhile settled itself
 * and is left alone. A pass stops after `maxBatches` pages or `budgetMs`,
 * whichever comes first, even inside a big group's count, which the next pass goes on with; after
 * the last group the walk starts again from the first. So a pass covers at least one page, and a
 * quiet group is reached within (groups ahead of it ÷ groups a pass covers) + 1 passes: 100,000
 * groups of a few jobs each take 200 pages, one pass at the defaults if the budget allows. Counts:
 * groups recounted, jobs released.
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
  /** Where the next page of job_groups starts: after this group ('' and '': from the first). */
  #after = { queue: '', group: '' };
  /** The page read last, while it has quiet groups not counted yet (kept from one pass to the next). */
  #page: GroupsPage | null = null;
  /** The group being counted: a pass's bound may cut its count short, and the next pass goes on with it. */
  #counting: Counting | null = null;

  constructor({ db, tables }: TaskDb, options: ReconcileGroupsOptions) {
    this.options = resolveReconcileGroupsOptions(options);
    this.#db = db;
    this.#tables = tables;
  }

  /** `passLeftMs`: what is left of the pass's budget (PassBudget), when smaller than budgetMs. */
  async runOnce(passLeftMs = Number.POSITIVE_INFINITY): Promise<{ recounted: number; released: number }> {
    const { batchSize, maxBatches, budgetMs } = this.options;
    const budget = new StepBudget(() => performance.now(), Math.min(budgetMs, passLeftMs));
    let pages = 0;
    // Each check ends a step: a page of groups read, a group's slots counted or recounted. The
    // first step is taken whatever the budget, so that a pass with none left still moves on.
    const spent = () => pages >= maxBatches || (budget.stepped() && pages > 0);
    const counts = { recounted: 0, released: 0 };
    const released = new Map<string, number>();
    while (!spent()) {
      let group = this.#counting;
      if (group === null) {
        group = this.#page?.quiet.shift() ?? null;
        if (group === null) {
          const ended = this.#page?.last === true;
          if (this.#page !== null) this.#after = this.#page.next;
          this.#page = null;
          // The end of job_groups ends the pass (unless the pass began there): the next one starts
          // again from the first group, and no group is recounted twice in one pass.
          if (ended && pages > 0) break;
          this.#page = await this.#readGroups();
          pages++;
          continue;
        }
        this.#counting = group;
      }
      const slots = await countSlotsPage(this.#db, this.#tables, group, group.afterJobId, batchSize);
      pages++;
      group.afterJobId = slots.lastJobId;
      group.taken += slots.taken;
      if (slots.seen === batchSize) continue;
      this.#counting = null;
      // A count that agrees, with nothing held to release: no write, no lock.
      const n = group.taken === group.active && !group.holds ? 0 : await applyRecount(this.#db, this.#tables, group);
      if (n === null) continue;
      counts.recounted++;
      counts.released += n;
      if (n > 0) released.set(group.queue, (released.get(group.queue) ?? 0) + n);
    }
    if (released.size > 0) this.options.onReleased?.(released);
    return counts;
  }

  /** The next page of job_groups after the cursor (one statement): its quiet groups, and where the walk goes after it. */
  async #readGroups(): Promise<GroupsPage> {
    const { queue, group } = this.#after;
    const { batchSize, quietMs } = this.options;
    const rows = await this.#db.select<{
      queue: string;
      group_key: string;
      active: number | string;
      updated_at: Date;
      quiet_for: number | string | null;
      has_holds: number | string;
    }>(sqlGroupsPage(this.#tables), [quietMs, queue, queue, group, batchSize]);
    const end = rows[rows.length - 1];
    const last = end === undefined || rows.length < batchSize;
    return {
      // Quiet, and holding slots or jobs: a group a lost count could have stuck.
      quiet: rows
        .filter((r) => Number(r.quiet_for) === 1 && (Number(r.active) > 0 || Number(r.has_holds) === 1))
        .map((r) => ({
          queue: r.queue,
          group: r.group_key,
          active: Number(r.active),
          updatedAt: r.updated_at,
          holds: Number(r.has_holds) === 1,
          afterJobId: 0,
          taken: 0,
        })),
      next: last ? { queue: '', group: '' } : { queue: end.queue, group: end.group_key },
      last,
    };
  }
}
