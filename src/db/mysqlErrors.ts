/**
 * What the server's (and driver's) error codes mean to a queue. See shared MYSQL.md §1.15.
 */

/** errno values sluice reacts to. */
export const ER = {
  DUP_ENTRY: 1062,
  LOCK_WAIT_TIMEOUT: 1205,
  LOCK_DEADLOCK: 1213,
  CHECKREAD: 1020,
  AUTOINC_READ_FAILED: 1467,
  NET_PACKET_TOO_LARGE: 1153,
  NO_SUCH_TABLE: 1146,
  BAD_DB: 1049,
  ACCESS_DENIED: 1045,
} as const;

const CONNECTION_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);

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

/** The connection died; the server rolled back whatever transaction it carried. */
export function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && CONNECTION_CODES.has(code);
}

export function isDuplicateKey(error: unknown): boolean {
  return errnoOf(error) === ER.DUP_ENTRY;
}
