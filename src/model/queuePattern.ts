import { OptionsError } from '../errors.ts';
import { QUEUE_NAME } from './queueName.ts';

/** A subscription to every queue whose name starts with a prefix: the prefix (0–63 name characters) then `*`. */
const QUEUE_PATTERN = /^[A-Za-z0-9_.:-]{0,63}\*$/;

/** Whether a worker's queue entry is a pattern (`*`, `tenant-*`) rather than a name. */
export function isQueuePattern(entry: string): boolean {
  return entry.endsWith('*');
}

/**
 * Throws OptionsError (naming `option`) unless `entry` is a queue name or a pattern: a name
 * prefix followed by one `*` at the end (`*` alone: every queue).
 */
export function assertQueueEntry(option: string, entry: unknown): string {
  if (typeof entry === 'string' && (QUEUE_NAME.test(entry) || QUEUE_PATTERN.test(entry))) return entry;
  throw new OptionsError(
    option,
    `must hold queue names of 1–64 characters of [A-Za-z0-9_.:-], or patterns: such a prefix then one '*' at the end ('*', 'tenant-*') (got ${JSON.stringify(entry)})`,
  );
}

/** Pure: whether `queue` is one of a pattern's queues. */
export function patternMatches(pattern: string, queue: string): boolean {
  return queue.startsWith(pattern.slice(0, -1));
}

/**
 * Pure: the queue names a pattern covers, as the half-open range [from, to) of ix_head's first
 * column (utf8mb4_bin: byte order); `to` null when unbounded. Every name character is below '~',
 * so the prefix followed by '~' bounds every name that starts with it.
 */
export function patternRange(pattern: string): { from: string; to: string | null } {
  const prefix = pattern.slice(0, -1);
  return { from: prefix, to: prefix === '' ? null : `${prefix}~` };
}
