import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** A worker instance's claim key: 64 random bits in base 36, zero-padded to 13 characters. */
const KEY_WIDTH = 13;
/** Most characters of the host name a worker id keeps (the registry's host column keeps it whole). */
const HOST_WIDTH = 40;
/** A character an id cannot hold (ids are printable ASCII). */
const NOT_PRINTABLE_ASCII = /[^\x21-\x7e]/g;

/**
 * Builds claim identities. A lock_id reads `<key>.<sequence>`: the key is 64 random bits drawn
 * once per worker instance, the sequence counts its claim statements (in base 36), so a lock_id
 * is unique to one claim statement and fences every later write to exactly that claim — even
 * when the same process claims the same job again after a maintenance pass. It is short on
 * purpose: lock_id is in the claim index (ix_head), whose entry every claim moves and every
 * completion deletes, and a 24-byte token instead of 64 made the drain measurably faster
 * (migration 202611250101). Who holds a claim is the worker registry's to say: a worker id reads
 * `<host>-<pid>~<key>`, so a claim's key names its worker (claimKeyOf, workerKeyOf).
 */
export class ClaimTokens {
  /** `<host>-<pid>`: the prefix of this process's worker ids. */
  static readonly processPrefix = ClaimTokens.prefixFor(hostname(), process.pid);
  readonly #prefix: string;
  readonly #key = randomBytes(8).readBigUInt64BE().toString(36).padStart(KEY_WIDTH, '0');
  #sequence = 0;

  constructor(prefix: string = ClaimTokens.processPrefix) {
    this.#prefix = prefix;
  }

  /** `<host>-<pid>` for a worker id: non-printable or non-ASCII characters become '_', the host is cut to HOST_WIDTH. */
  static prefixFor(host: string, pid: number): string {
    return `${host.replace(NOT_PRINTABLE_ASCII, '_').slice(0, HOST_WIDTH)}-${pid}`;
  }

  /** The id of the worker instance: `<host>-<pid>~<key>`. */
  get workerId(): string {
    return `${this.#prefix}~${this.#key}`;
  }

  /** A fresh lock_id for the next claim statement. */
  next(): string {
    this.#sequence += 1;
    return `${this.#key}.${this.#sequence.toString(36)}`;
  }
}
