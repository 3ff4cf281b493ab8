import { killParked, type RunOn, type SleepTarget } from './parkedSleep.ts';

/**
 * KILLs per round, over all its queues: a round trip each, on one connection. A batch wakes this
 * many workers at once; the woken ones claim in batches, the rest find the jobs at their poll.
 */
export const KILLS_PER_ROUND = 128;

export interface QueueRing<T extends SleepTarget> {
  /** Jobs written to the queue. */
  readonly jobs: number;
  /** Its doorbells seen asleep over this connection (findParked), in the order to ring them. */
  readonly parked: readonly T[];
}

export interface RingResult<T extends SleepTarget> {
  readonly kills: number;
  /** Doorbells whose connection has closed: their rows can go. */
  readonly gone: T[];
  readonly denied: T[];
}

/**
 * Rings each queue's doorbells in order, one per job it wrote. A doorbell found gone (1094) passes
 * its ring to the next. At most one KILL per connection, and KILLS_PER_ROUND in all.
 */
export async function ringParked<T extends SleepTarget>(
  on: RunOn,
  queues: readonly QueueRing<T>[],
): Promise<RingResult<T>> {
  const rung = new Set<number>();
  const result: RingResult<T> = { kills: 0, gone: [], denied: [] };
  let kills = 0;
  for (const queue of queues) {
    let woken = 0;
    for (const doorbell of queue.parked) {
      if (woken >= queue.jobs || kills >= KILLS_PER_ROUND) break;
      if (rung.has(doorbell.connectionId)) continue;
      rung.add(doorbell.connectionId);
      kills++;
      const outcome = await killParked(on, doorbell);
      if (outcome === 'rung') woken++;
      else if (outcome === 'gone') result.gone.push(doorbell);
      else result.denied.push(doorbell);
    }
  }
  return { ...result, kills };
}
