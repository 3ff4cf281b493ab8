/**
 * Bits of jobs.flags, read with the claimed row so that a claim or a completion knows, with no extra
 * read, whether it must look at job_edges or job_groups. A job outside every graph and limit has
 * flags 0 and pays nothing.
 */
export const JOB_FLAGS = {
  /** Rows of job_edges name this job as parent: its end releases, or cancels, its children. */
  hasDependents: 1,
  /** Rows of job_edges name this job as child: its end deletes them. */
  hasParents: 2,
  /**
   * The job belongs to a group with a concurrency limit (or of a fair queue): it holds one of the
   * group's slots, or waits for one in job_holds. Its end settles the group (src/groups/leaveGroups.ts):
   * a slot passes to the group's next held job, or is given back; a hold is dropped.
   */
  inGroup: 4,
  /**
   * The job's group had a rate when it was enqueued: its claim counts its start against the group's
   * current window, and a claim over the window gives it back for a later one
   * (src/worker/claims/countGroupStarts.ts). Set at enqueue, kept through retries and snoozes.
   */
  groupRated: 8,
  /**
   * The job belongs to a group of a fair queue with no concurrency limit: it counts in the group's
   * fair window (a soft bound), or waits for room in job_holds. Its completion does not touch the
   * group's row: the worker settles its group's freed count after the commit, a page at a time
   * (src/worker/FairGroupSettler.ts); its other ends (dead-letter, cancel) settle at once as inGroup does.
   */
  fairShare: 16,
} as const;

/**
 * The flags whose job a completion must settle in its own transaction (its edges, its group's slot):
 * completeInGraph takes those. Any other job (none of them: no flags, or only groupRated or fairShare,
 * which are counted at claim and settled after the commit) takes the plain statements.
 */
export const SETTLED_IN_COMPLETION = JOB_FLAGS.hasDependents | JOB_FLAGS.hasParents | JOB_FLAGS.inGroup;

/** Either flag that puts a job in its group's count (job_groups.active) or in its holds. */
export const GROUP_FLAGS = JOB_FLAGS.inGroup | JOB_FLAGS.fairShare;
