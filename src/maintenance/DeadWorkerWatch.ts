import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { type MonotonicClock, UnchangedSince } from './UnchangedSince.ts';

/**
 * Params: after id, limit. One page of the registry, in id order: each worker's beat as it stands
 * (heartbeat_at and the beat counter, compared only with what this process read before) and its
 * own heartbeat interval. One row per worker: a scan is cheap.
 */
const sqlWorkers = (t: Tables) => `
SELECT id, heartbeat_at, beats, heartbeat_interval_ms
FROM ${t.workers}
WHERE id > ?
ORDER BY id
LIMIT ?`;

/** A worker's beat as read from the registry: what a release of its claims is fenced on. */
export interface Beat {
  readonly id: string;
  readonly heartbeatAt: Date;
  readonly beats: number;
}

/**
 * Which registered workers are dead: those whose beat (heartbeat_at, beats) has not changed for
 * `missedHeartbeats` of their own heartbeat intervals, measured between this process's own reads
 * of the registry, on its own clock (UnchangedSince). What is read for the first time has stood
 * still for 0 ms, so a fresh watcher waits one such window before it calls anyone dead.
 */
export class DeadWorkerWatch {
  /** Each worker's beat as last read, and since when (on this process's clock) it has not changed. */
  readonly #seen: UnchangedSince<string>;

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    private readonly options: { clock: MonotonicClock; missedHeartbeats: number; batchSize: number },
  ) {
    this.#seen = new UnchangedSince<string>(options.clock);
  }

  /** Reads the whole registry; returns the workers whose beat stood still too long. */
  async dead(): Promise<Beat[]> {
    const dead: Beat[] = [];
    const present = new Set<string>();
    for await (const row of this.#registry()) {
      const beat = { id: row.id, heartbeatAt: row.heartbeat_at, beats: Number(row.beats) };
      present.add(beat.id);
      const stillMs = this.#seen.see(beat.id, `${beat.heartbeatAt.getTime()}/${beat.beats}`);
      if (stillMs >= this.options.missedHeartbeats * Number(row.heartbeat_interval_ms)) dead.push(beat);
    }
    this.#seen.keepOnly(present);
    return dead;
  }

  /** Forgets a worker whose row was removed. */
  forget(id: string): void {
    this.#seen.forget(id);
  }

  /** The registry's rows, read a page at a time in id order. */
  async *#registry() {
    let after = '';
    for (;;) {
      const page = await this.db.select<{
        id: string;
        heartbeat_at: Date;
        beats: number | string;
        heartbeat_interval_ms: number;
      }>(sqlWorkers(this.tables), [after, this.options.batchSize]);
      yield* page;
      if (page.length < this.options.batchSize) return;
      after = (page[page.length - 1] as { id: string }).id;
    }
  }
}
