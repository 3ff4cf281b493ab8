/**
 * The claim-key format, shared by the worker that writes claims (worker/ClaimTokens.ts) and by
 * everything that reads them back (job control, the maintenance sweeps). A lock_id reads
 * `<key>.<sequence>`; a worker id reads `<host>-<pid>~<key>`, so a claim's key names its worker.
 */

/** The lock_id column's width (CHAR(24) ascii, migration 202611250101): every token fits. */
export const LOCK_ID_WIDTH = 24;
/** What a claim key can be: printable ASCII without '.' (lock_id is ASCII; '.' ends the key). */
const KEY_PATTERN = /^[\x21-\x2d\x2f-\x7e]+$/;

/**
 * Pure: the claim key a worker id ends with (after its last '~'), or null when it cannot be one.
 * A worker of an earlier sluice ends its id with a nonce that starts none of its lock_ids (those
 * started with the whole id); migration 202611250101 refuses to run while such claims exist.
 */
export function workerKeyOf(workerId: string): string | null {
  const key = workerId.slice(workerId.lastIndexOf('~') + 1);
  return KEY_PATTERN.test(key) ? key : null;
}

/** Pure: the claim key a lock_id starts with (`<key>.<sequence>`): its worker's (workerKeyOf). */
export function claimKeyOf(lockId: string): string {
  const dot = lockId.lastIndexOf('.');
  return dot < 0 ? lockId : lockId.slice(0, dot);
}
