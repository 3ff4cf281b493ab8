import { BatchTooLargeError } from '../errors.ts';

/**
 * What the server's (and driver's) error codes mean to a queue. 1213 (deadlock, and Galera's
 * certification failure) and 1020 roll back the whole transaction; 1205 rolls back the statement
 * (MySQL reference manual, "InnoDB Error Handling"; MariaDB KB, "InnoDB Lock Modes").
 */

/** errno values sluice reacts to. */
export const ER = {
  LOCK_WAIT_TIMEOUT: 1205,
  LOCK_DEADLOCK: 1213,
  CHECKREAD: 1020,
  AUTOINC_READ_FAILED: 1467,
  NO_SUCH_TABLE: 1146,
  /** ER_CON_COUNT_ERROR: "Too many connections", the server's max_connections are all in use. */
  CON_COUNT_ERROR: 1040,
  /** ER_ERROR_DURING_COMMIT: on Galera also "wsrep_max_ws_rows exceeded". */
  ERROR_DURING_COMMIT: 1180,
  /** ER_UNKNOWN_ERROR: on Galera also "Maximum writeset size exceeded". */
  UNKNOWN_ERROR: 1105,
  /** ER_QUERY_INTERRUPTED: a statement ended by KILL QUERY (a doorbell's sleep, rung). */
  QUERY_INTERRUPTED: 1317,
  /** ER_NO_SUCH_THREAD: KILL named a connection that is gone (a doorbell of a dead worker). */
  NO_SUCH_THREAD: 1094,
  /** ER_KILL_DENIED_ERROR: KILL of another user's connection without CONNECTION ADMIN (or SUPER). */
  KILL_DENIED: 1095,
  /** ER_DUP_ENTRY: a unique key already holds the value. */
  DUP_ENTRY: 1062,
} as const;

function errnoOf(error: unknown): number | undefined {
  const errno = (error as { errno?: unknown } | null)?.errno;
  return typeof errno === 'number' ? errno : undefined;
}

/** A write refused because a unique key already holds its value (1062). */
export function isDuplicateKey(error: unknown): boolean {
  return errnoOf(error) === ER.DUP_ENTRY;
}

/**
 * A transaction-level conflict: the whole transaction was (or must be) rolled back and may be
 * re-run. 1467 is how MariaDB reports a deadlock on an AUTO-INC table lock.
 */
export function isTransientConflict(error: unknown): boolean {
  const errno = errnoOf(error);
  return (
    errno === ER.LOCK_DEADLOCK ||
    errno === ER.LOCK_WAIT_TIMEOUT ||
    errno === ER.CHECKREAD ||
    errno === ER.AUTOINC_READ_FAILED
  );
}

/** Driver codes and server errors that mean the session is gone (the server rolls back its open transaction). */
const CONNECTION_LOSS_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'PROTOCOL_SEQUENCE_TIMEOUT',
]);
const CONNECTION_LOSS_ERRNOS = new Set([1053, 1152, 1153, 1927, 2006, 2013, 4031]);

/** The connection died (or was killed): whatever ran on it in a transaction was rolled back by the server. */
export function isConnectionLoss(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown; fatal?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && CONNECTION_LOSS_CODES.has(e.code)) return true;
  if (typeof e.errno === 'number' && CONNECTION_LOSS_ERRNOS.has(e.errno)) return true;
  return e.fatal === true || (typeof e.message === 'string' && /closed state|Connection lost/i.test(e.message));
}

/** The server cannot be reached right now (down, restarting, refusing connections, or the session died). */
export function isServerUnavailable(error: unknown): boolean {
  if (isConnectionLoss(error)) return true;
  const e = error as { code?: unknown; errno?: unknown; message?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  if (typeof e.code === 'string' && ['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'].includes(e.code))
    return true;
  if (e.errno === 1040) return true; // too many connections
  return typeof e.message === 'string' && /Timeout acquiring a connection/i.test(e.message);
}

/**
 * A Galera cluster's refusal of a transaction over its write-set limits (measured on MariaDB
 * 10.11 + galera-4: `wsrep_max_ws_rows` → 1180 "wsrep_max_ws_rows exceeded", `wsrep_max_ws_size`
 * → 1105 "Maximum writeset size exceeded", both on the statement that crosses the limit), as a
 * BatchTooLargeError carrying the server's error; null for any other error.
 */
export function writeSetRefusal(error: unknown): BatchTooLargeError | null {
  const errno = errnoOf(error);
  const message = String((error as { sqlMessage?: unknown } | null)?.sqlMessage ?? '');
  const rows = errno === ER.ERROR_DURING_COMMIT && /wsrep_max_ws_rows/i.test(message);
  const size = errno === ER.UNKNOWN_ERROR && /writeset size/i.test(message);
  if (!rows && !size) return null;
  const limit = rows ? 'wsrep_max_ws_rows' : 'wsrep_max_ws_size';
  return new BatchTooLargeError(
    `the cluster refused the batch: its transaction is over ${limit} (server: ${errno} ${message}); ` +
      `nothing of it was written. Enqueue it in smaller batches (sluice enqueue without --atomic commits every --batch-size lines) or raise ${limit}.`,
    { cause: error },
  );
}
