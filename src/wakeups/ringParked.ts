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
 * Rings each queue's doorbells in order: one more than it wrote jobs, while it has that many. A
 * killed worker's sleep outlives it (the server sees the closed socket only when the sleep ends,
 * up to DOORBELL_SLEEP_SECONDS later), and a KILL that lands there wakes nobody: the one more
 * reaches a live worker. It costs, when every doorbell is live, one worker woken for nothing (one
 * empty claim); finding the dead one instead would cost a scan of the process list per round
 * (bench/ringCost.ts). A doorbell found gone (1094) passes its ring to the next. At most one KILL
 * per connection, and KILLS_PER_ROUND in all.
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
      if (woken > queue.jobs || kills >= KILLS_PER_ROUND) break;
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
