import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { isQueuePattern, patternRange } from '../model/queuePattern.ts';
import { type ReadyQueue, readyQueuesByName, readyQueuesInRange } from '../queues/readyQueues.ts';

/** (queue, priority) pairs one scan statement returns at most. */
const PAIRS_PER_READ = 1_000;

/**
 * The queues a worker subscribed to many of (more than WIDE_AT names, or a pattern such as
 * `tenant-*` or `*`) has due work in, found without reading its backlog (queues/readyQueues: a
 * loose index scan) and handed to the claimer a window at a time, in turn.
 *
 * A scan reads every named queue (a statement per thousand names) and, per pattern, the next
 * PAIRS_PER_READ (queue, priority) pairs of its range from where the last scan stopped (a
 * statement per pattern): a pattern covering more queues with work than that is walked over
 * several scans, in name order, round and round, so each of its queues is reached within
 * ceil(its queues with work / PAIRS_PER_READ) scans. The claimer takes windows from the list
 * in turn; passed through, the list starts over with the queues that may hold more (no read: a
 * scan per pass cost a wide drain about a tenth of its time), and a scan comes when none is left,
 * when the list is older than `maxAgeMs`, or after a ring: a queue with one job waits at most one
 * pass however deep the others are.
 */
export class WideQueues {
  readonly #names: string[];
  readonly #patterns: { pattern: string; after: string }[];
  #ready: ReadyQueue[] = [];
  #at = 0;
  #scannedAt = Number.NEGATIVE_INFINITY;
  #stale = true;
  readonly #drained = new Set<string>();
  /** The soonest positive dueInMs of the last scan (Infinity: none). */
  #firstDueInMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    entries: readonly string[],
    private readonly maxAgeMs: number,
  ) {
    this.#names = entries.filter((e) => !isQueuePattern(e));
    this.#patterns = entries.filter(isQueuePattern).map((pattern) => ({ pattern, after: '' }));
  }

  /** A job may have been enqueued: the next round scans first. */
  ring(): void {
    this.#stale = true;
  }

  /**
   * At the start of a claim round: scans again if the list is old or rung, or passed through with
   * no queue left that may hold more; a list passed through otherwise starts over with those
   * queues (no read). Returns whether it scanned.
   */
  async beginRound(): Promise<boolean> {
    // A queue the scan saw with its next job not yet due turns due by the clock: scan again then.
    const age = performance.now() - this.#scannedAt;
    const fresh = !this.#stale && age < this.maxAgeMs && age < this.#firstDueInMs;
    if (fresh && this.#at >= this.#ready.length) {
      this.#ready = this.#ready.filter((q) => !this.#drained.has(q.queue));
      this.#at = 0;
    }
    if (fresh && this.#at < this.#ready.length) return false;
    await this.#scan();
    return true;
  }

  /** Queues a claim found holding no more due jobs than it read: left out when the list starts over. */
  drained(queues: readonly string[]): void {
    for (const q of queues) this.#drained.add(q);
  }

  /** The next `count` due queues of the list (fewer at its end), passing over those `open` refuses. */
  next(count: number, open: (queue: string) => boolean): ReadyQueue[] {
    const out: ReadyQueue[] = [];
    while (out.length < count && this.#at < this.#ready.length) {
      const q = this.#ready[this.#at++] as ReadyQueue;
      if (q.dueInMs <= 0 && open(q.queue)) out.push(q);
    }
    return out;
  }

  /** The queues of the last scan (due or not), for the wait after an empty round. */
  get scanned(): readonly ReadyQueue[] {
    return this.#ready;
  }

  async #scan(): Promise<void> {
    const found = new Map<string, ReadyQueue>();
    for (const q of await readyQueuesByName(this.db, this.tables, this.#names, PAIRS_PER_READ)) found.set(q.queue, q);
    for (const p of this.#patterns) {
      const read = await readyQueuesInRange(this.db, this.tables, patternRange(p.pattern), p.after, PAIRS_PER_READ);
      for (const q of read.queues) found.set(q.queue, q);
      p.after = read.next ?? '';
    }
    // A random start, so that workers scanning together do not claim the same queues first.
    const list = [...found.values()];
    const start = Math.floor(Math.random() * list.length);
    this.#ready = [...list.slice(start), ...list.slice(0, start)];
    this.#at = 0;
    this.#drained.clear();
    this.#scannedAt = performance.now();
    this.#firstDueInMs = Math.min(Number.POSITIVE_INFINITY, ...list.filter((q) => q.dueInMs > 0).map((q) => q.dueInMs));
    this.#stale = false;
  }
}

/** More names than this (or any pattern) and a worker claims the wide way; fewer, each queue in turn. */
const WIDE_AT = 8;

/** Whether a worker's queue entries make it a wide one (WideQueues). */
export function isWide(entries: readonly string[]): boolean {
  return entries.length > WIDE_AT || entries.some(isQueuePattern);
}
