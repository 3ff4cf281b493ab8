import { isQueuePattern } from '../model/queuePattern.ts';

/**
 * How a worker on a pattern (`tenant-*`, `*`) is found by an enqueuer: its doorbell row's queue
 * column holds `*` then the pattern's prefix (`*tenant-`, `*`). No queue name holds a `*`, and `*`
 * sorts below every name character in utf8mb4_bin, so every pattern's rows lie in one range of
 * the primary key, [`*`, `+`), apart from every queue's: an enqueuer reads them all in one range
 * read (DoorbellCache), whatever queues it rings, and a ringer that predates patterns never reads
 * them. The longest pattern (63 characters then `*`) keeps its 64 characters.
 */
export const PATTERN_KEY_FROM = '*';
export const PATTERN_KEY_TO = '+';

/** Pure: the doorbell row key of a worker's queue entry (a name: itself). */
export function doorbellKey(entry: string): string {
  return isQueuePattern(entry) ? `*${entry.slice(0, -1)}` : entry;
}

/** Pure: whether a doorbell row key is a pattern's, and then whether `queue` is among its queues. */
export function patternKeyMatches(key: string, queue: string): boolean {
  return key.startsWith(PATTERN_KEY_FROM) && queue.startsWith(key.slice(1));
}
