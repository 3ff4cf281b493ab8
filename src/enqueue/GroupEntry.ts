import { escape as sqlLiteral } from 'mysql2';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';
import { type GroupPolicy, readGroupPolicies, readGroupPolicy } from '../groups/readGroupPolicy.ts';
import { settleGroups } from '../groups/settleGroup.ts';
import { JOB_FLAGS } from '../model/jobFlags.ts';
import type { NormalizedJob } from '../model/validateJob.ts';
import { runAtSql } from './jobInsert.ts';

/** Hold rows one INSERT writes at most. */
const HOLDS_PER_INSERT = 1_000;

/**
 * Params: none (the tuples are rendered: ids, the queue and group escaped, run_at the job's own
 * expression). Writes the hold rows of jobs enqueued held for their group. affectedRows = rows.
 */
const sqlHolds = (t: Tables, tuples: readonly string[]) => `
INSERT INTO ${t.jobHolds} (job_id, reason, run_at, queue, group_key, priority)
VALUES ${tuples.join(',\n       ')}`;

/** How a job enters the live table: its flags and whether it is parked at HELD_RUN_AT. */
export interface Placement {
  readonly flags: number;
  readonly held: boolean;
}

const FREE: Placement = { flags: 0, held: false };
const GROUP_HELD: Placement = { flags: JOB_FLAGS.inGroup, held: true };
const FAIR_HELD: Placement = { flags: JOB_FLAGS.fairShare, held: true };

/**
 * The enqueue side of group limits, for one transaction (a batch, or one job). A job of a limited
 * group — a limit given with it, its group's row, or its queue's default — is written held (at
 * HELD_RUN_AT, flags inGroup, or fairShare when only a fair window counts it) with a job_holds
 * row; once every job is written, close() settles
 * the groups touched (settleGroups), which releases as many held jobs as the group has room for, in
 * priority / run_at / id order: a job written held may start at once. A job with no group, or of a
 * group with no limit on a queue that is not fair, is written as before (the policy of a
 * transaction's groups read in a few statements per queue, none without a group).
 */
export class GroupEntry {
  /** How a group's jobs are counted (readGroupPolicy), by `queue \0 group`. */
  readonly #policy = new Map<string, GroupPolicy>();
  /** The limited groups touched, with the last limit a job gave (null: none). */
  readonly #touched = new Map<string, { queue: string; group: string; limit: number | null }>();
  #holds: string[] = [];

  constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
  ) {}

  /**
   * Reads the policy of the groups of these jobs not seen yet: one statement for one group, else
   * readGroupPolicies per queue (a few statements however many groups).
   */
  async resolve(jobs: readonly NormalizedJob[]): Promise<void> {
    const unread = new Map<string, { queue: string; group: string }>();
    for (const job of jobs) {
      if (job.group === null) continue;
      const key = `${job.queue}\u0000${job.group.key}`;
      if (job.group.concurrency !== null) this.#policy.set(key, 'limit');
      else if (!this.#policy.has(key)) unread.set(key, { queue: job.queue, group: job.group.key });
    }
    if (unread.size === 1) {
      const [[key, { queue, group }]] = [...unread] as [[string, { queue: string; group: string }]];
      if (!this.#policy.has(key)) this.#policy.set(key, await readGroupPolicy(this.tx, this.tables, queue, group));
      return;
    }
    const byQueue = new Map<string, string[]>();
    for (const { queue, group } of unread.values()) {
      const groups = byQueue.get(queue) ?? [];
      groups.push(group);
      byQueue.set(queue, groups);
    }
    for (const [queue, groups] of byQueue) {
      for (const [group, policy] of await readGroupPolicies(this.tx, this.tables, queue, groups)) {
        const key = `${queue}\u0000${group}`;
        if (!this.#policy.has(key)) this.#policy.set(key, policy);
      }
    }
  }

  /** Where the job (resolved) goes: held for its group, or free. A job with parents cannot also wait for a group. */
  placement(job: NormalizedJob, index: number, hasParents: boolean): Placement {
    if (job.group === null) return FREE;
    const key = `${job.queue}\u0000${job.group.key}`;
    const policy = this.#policy.get(key);
    if (policy === null || policy === undefined) return FREE;
    if (hasParents)
      throw new JobValidationError(
        index,
        'group',
        'of a job with parents cannot have a concurrency limit (not supported)',
      );
    const touched = this.#touched.get(key);
    this.#touched.set(key, {
      queue: job.queue,
      group: job.group.key,
      limit: job.group.concurrency ?? touched?.limit ?? null,
    });
    return policy === 'fair' ? FAIR_HELD : GROUP_HELD;
  }

  /** Records the hold row of a job written held (its id known); written by the next flush. */
  async hold(id: number, job: NormalizedJob): Promise<void> {
    const tuple = `(${id}, 'group', ${runAtSql(job)}, ${sqlLiteral(job.queue)}, ${sqlLiteral(job.group?.key ?? '')}, ${job.priority})`;
    this.#holds.push(tuple);
    if (this.#holds.length >= HOLDS_PER_INSERT) await this.flush();
  }

  /** Writes the recorded hold rows. */
  async flush(): Promise<void> {
    if (this.#holds.length === 0) return;
    const tuples = this.#holds;
    this.#holds = [];
    const { affectedRows } = await this.tx.write(sqlHolds(this.tables, tuples));
    if (affectedRows !== tuples.length) throw new Error(`wrote ${affectedRows} of ${tuples.length} group holds`);
  }

  /** Writes what is left and settles every group touched, in few statements (settleGroups): the jobs released, per queue. */
  async close(): Promise<Map<string, number>> {
    await this.flush();
    return settleGroups(
      this.tx,
      this.tables,
      [...this.#touched.values()].map((change) => ({ ...change, freed: 0 })),
    );
  }
}
