import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Builds claim identities. A lock_id reads `<host>-<pid>~<token>`: host and pid tell operators
 * which process holds a job; the token is unique to one claim statement (a per-instance nonce and
 * a sequence, as BullMQ does), so it fences every later write to exactly that claim — even when
 * the same process claims the same job again after a sweep.
 */
export class ClaimTokens {
  /** `<host>-<pid>`: the prefix every claim of this process carries. */
  static readonly processPrefix = `${hostname().slice(0, 64)}-${process.pid}`;
  readonly #nonce = randomBytes(4).toString('hex');
  #sequence = 0;

  /** The id of the worker instance: `<host>-<pid>~<nonce>`. */
  get workerId(): string {
    return `${ClaimTokens.processPrefix}~${this.#nonce}`;
  }

  /** A fresh lock_id for the next claim statement. */
  next(): string {
    this.#sequence += 1;
    return `${this.workerId}.${this.#sequence.toString(36)}`;
  }
}
