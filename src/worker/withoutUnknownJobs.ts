import type { SluiceRuntime } from '../sluiceRuntime.ts';
import type { ClaimedRow } from './claims/claimedRow.ts';
import { giveBackUnknown } from './claims/giveBackUnknown.ts';
import type { WorkerEvents } from './WorkerEvents.ts';

/** What giving back a claim's unknown jobs needs. */
export interface UnknownJobsDeps {
  readonly runtime: SluiceRuntime;
  readonly report: WorkerEvents;
  /** True if the worker has a handler for this job name. */
  knows(name: string): boolean;
  /** How long a given-back job waits before it is due again (about maxPollIntervalMs, jittered). */
  delayMs(): number;
}

/**
 * The rows of one claim the worker can run. The others — names it has no handler for (a job name
 * from a newer deploy, or the wrong jobs folder) — are given back at once in one fenced statement:
 * no attempt spent, due again after `delayMs()`, so that this worker does not claim them again in a
 * loop while a worker that knows them can take them. A failed give-back leaves those claims to
 * expire (reported); the rest still run. A claim of known jobs only pays one lookup per row.
 */
export async function withoutUnknownJobs(
  deps: UnknownJobsDeps,
  queue: string,
  lockId: string,
  rows: ClaimedRow[],
): Promise<ClaimedRow[]> {
  const known = rows.filter((r) => deps.knows(r.name));
  if (known.length === rows.length) return rows;
  const unknown = rows.filter((r) => !deps.knows(r.name));
  const ids = unknown.map((r) => Number(r.id));
  const delayMs = deps.delayMs();
  try {
    const given = await giveBackUnknown(deps.runtime.workerDb, deps.runtime.tables, lockId, ids, delayMs);
    if (given < ids.length) deps.report.claimLost('give back', lockId, ids, ids.length - given);
    deps.report.unknownJobs(queue, unknown, delayMs);
  } catch (error) {
    deps.report.error(error, `giving back ${ids.length} job(s) of unknown names`);
  }
  return known;
}
