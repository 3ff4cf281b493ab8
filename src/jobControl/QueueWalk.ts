import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';
import { QUEUE_NAME } from '../model/queueName.ts';
import { BELOW_SMALLINT, nextFreePriority } from '../queues/nextFreePriority.ts';
import type { JobFilter } from './jobFilter.ts';
import { ID_KEY, type Segment, type SegmentKey } from './Plan.ts';
import type { QueueHead } from './queueHeads.ts';

const RUN_AT: SegmentKey = { sql: 'j.run_at', field: 'run_at', kind: 'time' };
const FREE_KEYS: readonly SegmentKey[] = [RUN_AT, ID_KEY];
const RUNNING_KEYS: readonly SegmentKey[] = [
  { sql: 'j.lock_id', field: 'lock_id', kind: 'text' },
  { sql: 'j.priority', field: 'priority', kind: 'id' },
  RUN_AT,
  ID_KEY,
];

/** Which free jobs of a priority a segment holds: those due (waiting), those not yet due, or all. */
export type Due = 'due' | 'notDue' | 'held' | 'any';

const DUE_SQL: Record<Due, string> = {
  due: ' AND j.run_at <= NOW(3)',
  notDue: ` AND j.run_at > NOW(3) AND j.run_at < '${HELD_RUN_AT}'`,
  held: ` AND j.run_at = '${HELD_RUN_AT}'`,
  any: '',
};

/** A queue's free jobs of one priority (ix_head), by run_at, id: the claim's own order. */
export function freeSegment(t: Tables, queue: string, priority: number, due: Due): Segment {
  return {
    id: [queue, 'f', priority],
    from: `${t.jobs} j FORCE INDEX (ix_head)`,
    where: `j.queue = ? AND j.lock_id = '' AND j.priority = ?${DUE_SQL[due]}`,
    params: [queue, priority],
    keys: FREE_KEYS,
    descending: false,
  };
}

/** A queue's claimed jobs (ix_head's claimed range: the jobs in flight, never the backlog), by lock_id. */
export function runningSegment(t: Tables, queue: string): Segment {
  return {
    id: [queue, 'r'],
    from: `${t.jobs} j FORCE INDEX (ix_head)`,
    where: `j.queue = ? AND j.lock_id > ''`,
    params: [queue],
    keys: RUNNING_KEYS,
    descending: false,
  };
}

/** The segments of live queues for one state filter (undefined: every live state). */
export class QueueWalk {
  /** Whether free jobs are listed (every state but running), and running ones (running, or no state). */
  readonly free: boolean;
  readonly running: boolean;
  readonly #due: Due;

  constructor(
    private readonly t: Tables,
    state: JobFilter['state'],
  ) {
    this.free = state !== 'running';
    this.running = state === undefined || state === 'running';
    this.#due =
      state === 'waiting'
        ? 'due'
        : state === 'delayed' || state === 'retrying'
          ? 'notDue'
          : state === 'held'
            ? 'held'
            : 'any';
  }

  /**
   * One queue's segments: per free priority (those `head` read, then a seek for each further one;
   * from the cursor's priority when resuming), then its running jobs unless `head` says it held no claim.
   */
  async *queue(db: Executor, queue: string, from?: readonly (string | number)[], head?: QueueHead) {
    const resumeRunning = from?.[1] === 'r';
    if (this.free && !resumeRunning) {
      let priority: number | null = null;
      if (from?.[1] === 'f') priority = Number(from[2]);
      else {
        for (const p of head?.priorities ?? []) yield this.#freeSegment(queue, p);
        if (head?.complete) priority = null;
        else priority = await nextFreePriority(db, this.t, queue, head?.priorities.at(-1) ?? BELOW_SMALLINT);
      }
      while (priority !== null) {
        yield this.#freeSegment(queue, priority);
        priority = await nextFreePriority(db, this.t, queue, priority);
      }
    }
    if (this.running && (head?.claimed ?? true)) yield runningSegment(this.t, queue);
  }

  #freeSegment(queue: string, priority: number): Segment {
    return freeSegment(this.t, queue, priority, this.#due);
  }
}

/** A live walk's segment ids: [queue, 'f', priority] and [queue, 'r']. */
export function liveKeysOf(id: readonly (string | number)[]): readonly SegmentKey[] | null {
  const [queue, part, priority] = id;
  if (typeof queue !== 'string' || !QUEUE_NAME.test(queue)) return null;
  if (part === 'r' && id.length === 2) return RUNNING_KEYS;
  const smallint = Number.isInteger(priority) && (priority as number) > BELOW_SMALLINT && (priority as number) < 32_768;
  if (part === 'f' && id.length === 3 && smallint) return FREE_KEYS;
  return null;
}
