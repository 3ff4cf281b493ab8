import type { SluiceRuntime } from '../sluiceRuntime.ts';
import { releaseClaims } from './claims/releaseClaims.ts';
import { groupByClaim, type RunningJob } from './RunningJob.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/**
 * Gives back the claims of jobs a stopping worker will not finish (each already moved to
 * `released`): fenced, one statement per claim, free and due at once. Returns how many were still
 * held; the others are reported as lost. A failure leaves those claims to expire, and is reported.
 */
export async function releaseAtStop(
  runtime: SluiceRuntime,
  report: WorkerEvents,
  jobs: readonly RunningJob[],
): Promise<number> {
  let released = 0;
  for (const [lockId, group] of groupByClaim(jobs)) {
    const ids = group.map((r) => r.job.id);
    try {
      const count = await releaseClaims(runtime.workerDb, runtime.tables, lockId, ids);
      released += count;
      if (count < ids.length) report.claimLost('release', lockId, ids, ids.length - count);
    } catch (error) {
      report.error(error, 'releasing claims at stop');
    }
  }
  return released;
}
