/**
 * Bits of jobs.flags, read with the claimed row so that a completion knows, with no extra read,
 * whether it must look at job_edges. A job outside every graph has flags 0 and pays nothing.
 */
export const JOB_FLAGS = {
  /** Rows of job_edges name this job as parent: its end releases, or cancels, its children. */
  hasDependents: 1,
  /** Rows of job_edges name this job as child: its end deletes them. */
  hasParents: 2,
} as const;
