import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** The lock_id column's width (CHAR(64) ascii, migration 202611230300): every token fits. */
export const LOCK_ID_WIDTH = 64;
/** What follows `-<pid>` in a token, at most: `~<nonce>.<sequence>` (4 bytes of nonce in hex, 10 base-36 digits of sequence). */
const TOKEN_WIDTH = 1 + 8 + 1 + 10;
/** A character a lock_id cannot hold (the column is ASCII; spaces would be padding). */
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/g;

/** Whether a worker id could prefix a lock_id at all (ids registered before the ASCII column may not). */
export function canPrefixLockId(workerId: string): boolean {
  return workerId.length > 0 && workerId.search(NOT_PRINTABLE_ASCII) === -1;
}

/**
 * Builds claim identities. A lock_id reads `<host>-<pid>~<token>`: host and pid tell operators
 * which process holds a job; the token is unique to one claim statement (a per-instance nonce and
 * a sequence, as BullMQ does), so it fences every later write to exactly that claim — even when
 * the same process claims the same job again after a maintenance pass. The host is written in printable
 * ASCII and cut to fit the column (the worker registry keeps the full name).
 */
export class ClaimTokens {
  /** `<host>-<pid>`: the prefix every claim of this process carries. */
  static readonly processPrefix = ClaimTokens.prefixFor(hostname(), process.pid);
  readonly #prefix: string;
  readonly #nonce = randomBytes(4).toString('hex');
  #sequence = 0;

  constructor(prefix: string = ClaimTokens.processPrefix) {
    this.#prefix = prefix;
  }

  /** `<host>-<pid>` for a lock_id: non-printable or non-ASCII characters become '_', the host is cut to fit LOCK_ID_WIDTH. */
  static prefixFor(host: string, pid: number): string {
    const tail = `-${pid}`;
    return `${host.replace(NOT_PRINTABLE_ASCII, '_').slice(0, LOCK_ID_WIDTH - TOKEN_WIDTH - tail.length)}${tail}`;
  }

  /** The id of the worker instance: `<host>-<pid>~<nonce>`. */
  get workerId(): string {
    return `${this.#prefix}~${this.#nonce}`;
  }

  /** A fresh lock_id for the next claim statement. */
  next(): string {
    this.#sequence += 1;
    return `${this.workerId}.${this.#sequence.toString(36)}`;
  }
}
