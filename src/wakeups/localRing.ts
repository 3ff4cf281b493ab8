/**
 * The in-process ring: an enqueue that commits in a process whose workers claim from the same
 * queue (same table prefix) wakes them at once, without a statement. Process-wide, keyed by table
 * prefix and queue: two installs with one prefix on different servers in one process at worst
 * wake a worker for nothing (one empty claim).
 */
import { isQueuePattern, patternMatches } from '../model/queuePattern.ts';

type Listener = () => void;

const listeners = new Map<string, Set<Listener>>();

/** Listeners subscribed by pattern (`tenant-*`, `*`), by table prefix: each ring checks them all (a process holds few). */
const patternListeners = new Map<string, Set<{ readonly pattern: string; readonly listener: Listener }>>();

/** Worker ids of this process's workers: the in-process ring wakes them, an enqueuer never sends them a KILL. */
const localWorkers = new Set<string>();

const keyOf = (prefix: string, queue: string) => `${prefix}\u0000${queue}`;

/** Calls `listener` whenever a job of one of `queues` (names or patterns) commits in this process. Returns the unsubscribe. */
export function onLocalRing(
  prefix: string,
  workerId: string,
  queues: readonly string[],
  listener: Listener,
): () => void {
  localWorkers.add(workerId);
  const keys = queues.filter((q) => !isQueuePattern(q)).map((queue) => keyOf(prefix, queue));
  const patterns = queues.filter(isQueuePattern).map((pattern) => ({ pattern, listener }));
  const byPattern = patternListeners.get(prefix) ?? new Set();
  if (patterns.length > 0) patternListeners.set(prefix, byPattern);
  for (const p of patterns) byPattern.add(p);
  for (const key of keys) {
    const set = listeners.get(key) ?? new Set<Listener>();
    listeners.set(key, set);
    set.add(listener);
  }
  return () => {
    localWorkers.delete(workerId);
    for (const p of patterns) byPattern.delete(p);
    if (byPattern.size === 0) patternListeners.delete(prefix);
    for (const key of keys) {
      const set = listeners.get(key);
      set?.delete(listener);
      if (set?.size === 0) listeners.delete(key);
    }
  };
}

/** Wakes this process's workers of these queues. */
export function ringLocal(prefix: string, queues: Iterable<string>): void {
  const byPattern = patternListeners.get(prefix);
  for (const queue of queues) {
    for (const listener of listeners.get(keyOf(prefix, queue)) ?? []) listener();
    for (const p of byPattern ?? []) if (patternMatches(p.pattern, queue)) p.listener();
  }
}

/** Whether this worker runs in this process. */
export function isLocalWorker(workerId: string): boolean {
  return localWorkers.has(workerId);
}
