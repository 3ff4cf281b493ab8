import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type ClaimedRow, payloadApartOf } from './claims/claimedRow.ts';
import { prefetchPayloads, readDiskReads } from './claims/prefetchPayloads.ts';

/** Most statements a read-ahead round sends at once, each on its own connection: the depth of its reads. */
export const PREFETCH_SLICES = 4;
/** A round reads this many claims' worth of the head past the claim that triggered it… */
const CLAIMS_AHEAD = 2;
/** …and never more rows than this, whatever the claim's size. */
const MAX_ROWS_AHEAD = 2_000;
/** Fewest rows per statement of a round: a round for small claims sends fewer statements. */
const MIN_SLICE_ROWS = 16;
/** How often the server's disk reads are looked at (scaled by a random factor in [0.75, 1.25)). */
export const DISK_CHECK_MS = 500;
/** The second look comes sooner: a drain whose payloads are in memory reads ahead for about this long. */
const FIRST_CHECK_MS = 100;
/**
 * Pages the server read from disk per payload this worker claimed apart, over one look, at or above
 * which the payloads are taken to be on disk. A drain whose payloads are in the buffer pool reads
 * none; one whose payloads outgrew it reads ~0.7 (seed004's 0–16 KB: bench/README.md).
 */
export const DISK_BOUND_PAGES_PER_PAYLOAD = 0.05;

/** Pure: whether `pagesRead` from disk while `payloads` were claimed says the payloads live on disk. */
export function payloadsOnDisk(pagesRead: number, payloads: number): boolean {
  return payloads > 0 && pagesRead >= DISK_BOUND_PAGES_PER_PAYLOAD * payloads;
}

/** The seams a test turns: the clock, and the server's count of pages read from disk. */
export interface PrefetchSeams {
  readonly now: () => number;
  readonly diskReads: (db: Executor) => Promise<number>;
}

const REAL: PrefetchSeams = { now: () => performance.now(), diskReads: readDiskReads };

/**
 * One worker's read-ahead of payloads stored apart. A claim reads its jobs' payloads one primary-key
 * read after another; when they are not in the server's buffer pool (a backlog of kilobyte payloads
 * larger than the pool: InnoDB reads with O_DIRECT, so no OS cache stands behind it) each is a
 * synchronous disk read, and the claim loop waits on the disk one page at a time. So after a claim
 * that took payloads stored apart, the next stretch of the queue's head (CLAIMS_AHEAD claims'
 * worth) is read in up to PREFETCH_SLICES statements at once on a small pool of their own: the
 * disk serves them in parallel while the claimed jobs run, and the next claims find the pages in
 * memory. One round at a time per worker, and the next only once its claims took as many rows as
 * the last one read, so that rounds do not read the same payloads again.
 *
 * Only while it pays: every DISK_CHECK_MS (jittered, one `SHOW GLOBAL STATUS` read; the second
 * look after FIRST_CHECK_MS) the worker compares the pages the server read from disk with the
 * payloads it claimed (payloadsOnDisk); a drain whose payloads are in memory stops reading ahead
 * at its second look, and starts again when the server starts reading from disk. The reads are
 * consistent reads (no lock taken or waited on) that change nothing, so a failed or wasted round
 * costs only time: it is not reported (a claim that fails is). Without a pool of its own (the
 * application passed its own knex) it never runs.
 */
export class PayloadPrefetch {
  readonly #db: Executor | null;
  readonly #tables: Tables;
  readonly #seams: PrefetchSeams;
  /** Until the first look says otherwise: the first claims of a cold backlog are the ones that wait. */
  #onDisk = true;
  #round: Promise<void> | null = null;
  /** Rows the last round read ahead, and rows this worker claimed since it was sent: the next waits until they meet. */
  #lastAhead = 0;
  #claimedSince = 0;
  #looking = false;
  #nextLookAt = 0;
  /** Payloads stored apart that this worker claimed, and the server's disk reads, at the last look. */
  #last: { payloads: number; pagesRead: number } | null = null;
  #payloads = 0;

  constructor(db: Executor | null, tables: Tables, seams: PrefetchSeams = REAL) {
    this.#db = db;
    this.#tables = tables;
    this.#seams = seams;
  }

  /** Whether rounds are being sent: the last look found the payloads on disk (or none was taken yet). */
  get active(): boolean {
    return this.#onDisk;
  }

  /** After a claim of `want` jobs of this head returned `rows`: reads ahead, when they carried payloads stored apart and it pays. */
  afterClaim(head: { queue: string; priorities: readonly number[] }, rows: readonly ClaimedRow[], want: number): void {
    const db = this.#db;
    if (db === null) return;
    this.#claimedSince += rows.length;
    let apart = 0;
    for (const row of rows) if (payloadApartOf(row)) apart++;
    if (apart === 0) return;
    this.#payloads += apart;
    this.#look(db);
    // Not before this worker's claims took as many rows as the last round read: rounds that overlap
    // read the same payloads again (in memory by then, so only server CPU).
    if (!this.#onDisk || this.#round !== null || this.#claimedSince < this.#lastAhead) return;
    const ahead = Math.min(MAX_ROWS_AHEAD, want * CLAIMS_AHEAD);
    this.#lastAhead = ahead;
    this.#claimedSince = 0;
    const slices = Math.max(1, Math.min(PREFETCH_SLICES, Math.floor(ahead / MIN_SLICE_ROWS)));
    this.#round = prefetchPayloads(db, this.#tables, head, ahead, slices).then(
      () => {
        this.#round = null;
      },
      () => {
        this.#round = null;
      },
    );
  }

  /** Resolves once the round under way (if any) is over: the worker waits for it before its pools go. */
  async settled(): Promise<void> {
    await this.#round;
  }

  #look(db: Executor): void {
    const now = this.#seams.now();
    if (this.#looking || now < this.#nextLookAt) return;
    this.#looking = true;
    this.#nextLookAt = now + (this.#last === null ? FIRST_CHECK_MS : DISK_CHECK_MS) * (0.75 + Math.random() * 0.5);
    const payloads = this.#payloads;
    this.#seams
      .diskReads(db)
      .then((pagesRead) => {
        const last = this.#last;
        this.#last = { payloads, pagesRead };
        if (last !== null && payloads > last.payloads)
          this.#onDisk = payloadsOnDisk(pagesRead - last.pagesRead, payloads - last.payloads);
      })
      .catch(() => undefined)
      .finally(() => {
        this.#looking = false;
      });
  }
}
