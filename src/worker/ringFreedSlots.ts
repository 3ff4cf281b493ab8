import type { SluiceRuntime } from '../sluiceRuntime.ts';

/**
 * Rings the queues of jobs that just gave a slot back (their completion, release or dead-lettering
 * has committed), when their queue is claimed within a cap: a worker held back by the cap, in this
 * process or another (its doorbell), claims the freed slot at once instead of at its next poll. A
 * queue without a limit costs nothing here (no statement, no ring): a finished job there frees
 * nothing another worker waits for. `limited` is what this worker's claims saw of the queue
 * (QueueGates): a cap or a rate.
 */
export function ringFreedSlots(
  runtime: SluiceRuntime,
  limited: (queue: string) => boolean,
  queues: Iterable<string>,
): void {
  let freed: Map<string, number> | undefined;
  for (const queue of queues) {
    if (!limited(queue)) continue;
    freed ??= new Map();
    freed.set(queue, (freed.get(queue) ?? 0) + 1);
  }
  if (freed) runtime.ringer.ring(runtime.tables.prefix, freed);
}
