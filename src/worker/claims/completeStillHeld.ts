import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { ClaimLostError } from '../../errors.ts';
import { type CompleteOptions, completeJobs } from './completeJobs.ts';
import { heldClaims } from './heldClaims.ts';

/**
 * After completeJobs with history threw ClaimLostError (its transaction rolled back, so nothing
 * was completed): completes the jobs this claim still holds, so one lost job does not send its
 * finished siblings back to the maintenance process. Returns the ids it no longer held. A claim lost again
 * meanwhile is looked up anew, at most three times; jobs still held after that stay claimed and
 * expire (at-least-once). Its statements follow completeJobs and heldClaims: re-run after a
 * transient conflict by the Executor or withTransaction, never by this function.
 */
export async function completeStillHeld(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: Omit<CompleteOptions, 'history' | 'wholeClaimOf'> = {},
): Promise<number[]> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const held = await heldClaims(db, tables, lockId, ids);
    if (held.size === 0) break;
    try {
      await completeJobs(db, tables, lockId, [...held], { history: true, ...options });
      return ids.filter((id) => !held.has(id));
    } catch (error) {
      if (!(error instanceof ClaimLostError)) throw error;
    }
  }
  return [...ids];
}
