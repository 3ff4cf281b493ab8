/**
 * What the server's (and driver's) error codes mean to a queue. See shared MYSQL.md §1.15.
 */

/** errno values sluice reacts to. */
export const ER = {
  LOCK_WAIT_TIMEOUT: 1205,
  LOCK_DEADLOCK: 1213,
  CHECKREAD: 1020,
  AUTOINC_READ_FAILED: 1467,
  NO_SUCH_TABLE: 1146,
} as const;

function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/**
 * A transaction-level conflict: the whole transaction was (or must be) rolled back and may be
 * re-run. 1467 is how MariaDB reports a deadlock on an AUTO-INC table lock.
 */
export function isTransientConflict(error: unknown): boolean {
  const errno = errnoOf(error);
  return errno === ER.LOCK_DEADLOCK || errno === ER.LOCK_WAIT_TIMEOUT || errno === ER.CHECKREAD || errno === ER.AUTOINC_READ_FAILED;
}

