import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { releaseClaims } from './claims/releaseClaims.ts';
import { groupByClaim, type RunningJob } from './RunningJob.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/**
 * Gives back the claims of jobs the worker will not run (each already moved to `released`): at a
 * stop, or jobs claimed ahead that waited too long. Fenced, one statement per claim, free and due
 * at once, retry_times unchanged. Returns how many were still held; the others are reported as
 * lost. A failure leaves those claims to expire, and is reported (`when`: at what).
 */
export async function releaseJobs(
  runtime: SluiceRuntime,
  report: WorkerEvents,
  jobs: readonly RunningJob[],
  when: string,
): Promise<number> {
  let released = 0;
  for (const [lockId, group] of groupByClaim(jobs)) {
    const ids = group.map((r) => r.job.id);
    try {
      const count = await releaseClaims(runtime.workerDb, runtime.tables, lockId, ids);
      released += count;
      if (count < ids.length) report.claimLost('release', lockId, ids, ids.length - count);
    } catch (error) {
      report.error(error, `releasing claims ${when}`);
    }
  }
  return released;
}
