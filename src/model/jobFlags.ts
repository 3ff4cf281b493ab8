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
} as const;
