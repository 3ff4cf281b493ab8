import { workerKeyOf } from '../../src/model/claimKey.ts';
import type { TestDatabase } from './testDatabase.ts';

/** Whether `lockId` is a claim of the worker process `pid` runs: its lock_ids start with the claim key its registry id ends with. */
export async function isClaimOf(db: TestDatabase, lockId: string | undefined, pid: number): Promise<boolean> {
  if (!lockId) return false;
  const workers = await db.query<{ id: string }>('SELECT id FROM sluice_workers WHERE pid = ?', [pid]);
  return workers.some((w) => lockId.startsWith(`${workerKeyOf(w.id)}.`));
}
