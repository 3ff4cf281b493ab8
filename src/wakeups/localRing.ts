/**
 * The in-process ring: an enqueue that commits in a process whose workers claim from the same
 * queue (same table prefix) wakes them at once, without a statement. Process-wide, keyed by table
 * prefix and queue: two installs with one prefix on different servers in one process at worst
 * wake a worker for nothing (one empty claim).
 */
type Listener = () => void;

const listeners = new Map<string, Set<Listener>>();

/** Worker ids of this process's workers: the in-process ring wakes them, an enqueuer never sends them a KILL. */
const localWorkers = new Set<string>();

const keyOf = (prefix: string, queue: string) => `${prefix}\u0000${queue}`;

/** Calls `listener` whenever a job of one of `queues` commits in this process. Returns the unsubscribe. */
export function onLocalRing(
  prefix: string,
  workerId: string,
  queues: readonly string[],
  listener: Listener,
): () => void {
  localWorkers.add(workerId);
  const keys = queues.map((queue) => keyOf(prefix, queue));
  for (const key of keys) {
    const set = listeners.get(key) ?? new Set<Listener>();
    listeners.set(key, set);
    set.add(listener);
  }
  return () => {
    localWorkers.delete(workerId);
    for (const key of keys) {
      const set = listeners.get(key);
      set?.delete(listener);
      if (set?.size === 0) listeners.delete(key);
    }
  };
}

/** Wakes this process's workers of these queues. */
export function ringLocal(prefix: string, queues: Iterable<string>): void {
  for (const queue of queues) {
    for (const listener of listeners.get(keyOf(prefix, queue)) ?? []) listener();
  }
}

/** Whether this worker runs in this process. */
export function isLocalWorker(workerId: string): boolean {
  return localWorkers.has(workerId);
}
