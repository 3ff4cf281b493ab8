/**
 * Bits of jobs.flags, read with the claimed row so that a completion knows, with no extra read,
 * whether it must look at job_edges. A job outside every graph has flags 0 and pays nothing.
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
} as const;
