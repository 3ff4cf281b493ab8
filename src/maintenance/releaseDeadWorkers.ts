import { escapeLike } from '../db/escapeLike.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { OptionsError } from '../errors.ts';
import { integerIn } from '../options.ts';
import type { PayloadRedactor } from '../redactPayload.ts';
import { workerKeyOf } from '../worker/ClaimTokens.ts';
import { deadLetterExhausted } from './deadLetterExhausted.ts';
import { claimedQueues, type MaintenanceTask, type SkippedRelease, type TaskDb } from './MaintenanceTask.ts';
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

/**
 * Params: queue, lock_id LIKE pattern, after id, limit. The claims a worker holds in one queue:
 * every lock_id it writes starts with its claim key (the end of its id: ClaimTokens), so this
 * is one ix_head range (queue, lock_id prefix) holding exactly those claims (sorted by id: at
 * most the worker's concurrency). Forced, as in releaseStaleClaims.
 */
const sqlClaimsOf = (t: Tables) => `
SELECT id
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?
  AND lock_id LIKE ?
  AND id > ?
ORDER BY id
LIMIT ?`;

/**
 * Params: ids (list), lock_id LIKE pattern. Locks those of the claims that nobody else holds a
 * lock on — a worker frozen between its exactly-once DELETE and its COMMIT holds its job's row
 * until its transaction ends: waiting for it would stop every other release behind it — and
 * that the dead worker still holds. Returns their ids.
 */
const sqlLockClaims = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id LIKE ?
FOR UPDATE SKIP LOCKED`;

/**
 * Params: ids (list, locked), lock_id LIKE pattern, worker id, heartbeat_at and beats as observed.
 * Releases those claims if the worker's row still shows the very beat that was observed (checked
 * in the statement: a worker that beat again after it was judged keeps its claims), bumping
 * retry_times: its attempts count as failed. affectedRows = claims released.
 */
const sqlRelease = (t: Tables) => `
UPDATE ${t.jobs}
SET last_error = CONCAT('worker of claim ', lock_id, ' stopped heartbeating (died or stalled)'),
    lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1
WHERE id IN (?)
  AND lock_id LIKE ?
  AND EXISTS (
    SELECT 1 FROM ${t.workers} w
    WHERE w.id = ?
      AND w.heartbeat_at = ?
      AND w.beats = ?)`;

/** Params: ids (list), lock_id LIKE pattern. Which of those jobs the worker still holds (a plain read). */
const sqlStillHeld = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id LIKE ?`;

/** Params: id, heartbeat_at and beats as observed. Removes a dead worker's row if it still shows that beat. */
const sqlRemoveWorker = (t: Tables) => `
DELETE FROM ${t.workers}
WHERE id = ?
  AND heartbeat_at = ?
  AND beats = ?`;

/** Params: id. A dead worker's doorbells (an enqueuer on the same server would drop them too, at its next ring). */
const sqlForgetDoorbells = (t: Tables) => `
DELETE FROM ${t.doorbells}
WHERE worker_id = ?`;

export interface ReleaseDeadWorkersOptions {
  /** A worker whose beat stood still for this many of its own heartbeat intervals is dead. */
  readonly missedHeartbeats: number;
  readonly batchSize: number;
  /** The clock this process measures liveness on (monotonic, ms). */
  readonly clock: MonotonicClock;
  /** Told of claims it could not release because another transaction holds their rows. */
  readonly onSkipped?: (skipped: SkippedRelease) => void;
  /** The install's redactPayload hook, for the jobs it dead-letters. */
  readonly redactPayload?: PayloadRedactor | null;
}

interface Beat {
  readonly id: string;
  readonly heartbeatAt: Date;
  readonly beats: number;
}

/**
 * The fast recovery path: a worker whose beat (heartbeat_at, beats) has not changed for
 * `missedHeartbeats` of its own heartbeat intervals — measured between this process's own
 * observations, on its own clock — is dead: its claims go back to the queue at once
 * (retry_times + 1) instead of after the (much longer) lock timeout, its exhausted jobs are
 * dead-lettered, and its registry row is removed. A process that starts watching (or takes the
 * lease) therefore waits one such window before it declares anyone dead: observe() lets a
 * standby keep watching so that a take-over can act at once.
 *
 * Releases never wait on a row lock: each is a short transaction that locks the claims with SKIP
 * LOCKED and releases what it locked; claims whose rows another transaction holds (a worker frozen
 * mid-commit) are reported through onSkipped and tried again next pass, and the worker's row stays
 * until they are released.
 */
export function releaseDeadWorkers(
  { db, tables }: TaskDb,
  options: ReleaseDeadWorkersOptions,
): MaintenanceTask<'releaseDeadWorkers', 'workers' | 'claims' | 'deadLettered'> {
  if (!(typeof options.missedHeartbeats === 'number' && options.missedHeartbeats >= 1.5)) {
    throw new OptionsError(
      'missedHeartbeats',
      `must be a number of at least 1.5 (got ${String(options.missedHeartbeats)})`,
    );
  }
  integerIn('batchSize', options.batchSize, 1, 10_000);
  const seen = new UnchangedSince<string>(options.clock);

  /** Reads the whole registry; returns the workers whose beat stood still too long. */
  async function observe(): Promise<Beat[]> {
    const dead: Beat[] = [];
    const present = new Set<string>();
    let after = '';
    for (;;) {
      const page = await db.select<{
        id: string;
        heartbeat_at: Date;
        beats: number | string;
        heartbeat_interval_ms: number;
      }>(sqlWorkers(tables), [after, options.batchSize]);
      for (const row of page) {
        const beat = { id: row.id, heartbeatAt: row.heartbeat_at, beats: Number(row.beats) };
        present.add(beat.id);
        const stillMs = seen.see(beat.id, `${beat.heartbeatAt.getTime()}/${beat.beats}`);
        if (stillMs >= options.missedHeartbeats * Number(row.heartbeat_interval_ms)) dead.push(beat);
      }
      if (page.length < options.batchSize) break;
      after = (page[page.length - 1] as { id: string }).id;
    }
    seen.keepOnly(present);
    return dead;
  }

  /** Releases one dead worker's claims in one queue; false if the worker turned out to be alive. */
  async function releaseIn(
    queue: string,
    beat: Beat,
    pattern: string,
    counts: { claims: number; deadLettered: number },
  ) {
    let skipped: number[] = [];
    let after = 0;
    for (;;) {
      const ids = (
        await db.select<{ id: number }>(sqlClaimsOf(tables), [queue, pattern, after, options.batchSize])
      ).map((r) => Number(r.id));
      if (ids.length === 0) break;
      after = ids[ids.length - 1] as number;
      const { locked, released } = await withTransaction(db, async (tx) => {
        const mine = (await tx.select<{ id: number }>(sqlLockClaims(tables), [ids, pattern])).map((r) => Number(r.id));
        if (mine.length === 0) return { locked: mine, released: 0 };
        const result = await tx.write(sqlRelease(tables), [mine, pattern, beat.id, beat.heartbeatAt, beat.beats]);
        return { locked: mine, released: result.affectedRows };
      });
      // Nothing released although claims were locked: the worker beat again since it was judged.
      if (locked.length > 0 && released === 0) return { alive: true, skipped };
      counts.claims += released;
      counts.deadLettered += await deadLetterExhausted(
        db,
        tables,
        locked,
        options.batchSize,
        options.redactPayload ?? null,
      );
      if (locked.length < ids.length) {
        const others = ids.filter((id) => !locked.includes(id));
        const held = (await db.select<{ id: number }>(sqlStillHeld(tables), [others, pattern])).map((r) =>
          Number(r.id),
        );
        skipped = [...skipped, ...held];
      }
      if (ids.length < options.batchSize) break;
    }
    return { alive: false, skipped };
  }

  return {
    name: 'releaseDeadWorkers',
    async observe() {
      await observe();
    },
    async runOnce() {
      const dead = await observe();
      const counts = { workers: 0, claims: 0, deadLettered: 0 };
      const queues = dead.length > 0 ? await claimedQueues({ db, tables }) : [];
      for (const beat of dead) {
        let alive = false;
        let skipped = 0;
        // A worker id without a claim key (a worker of a sluice before the short lock_id) holds no
        // claim: migration 202611250101 refuses to run while such claims exist.
        const key = workerKeyOf(beat.id);
        for (const queue of queues) {
          if (key === null) break;
          const result = await releaseIn(queue, beat, `${escapeLike(key)}.%`, counts);
          if (result.skipped.length > 0) {
            skipped += result.skipped.length;
            options.onSkipped?.({
              task: 'releaseDeadWorkers',
              queue,
              workerId: beat.id,
              jobIds: result.skipped,
              reason:
                'another transaction holds their rows (a worker frozen or slow between its writes and its COMMIT?)',
            });
          }
          if (result.alive) {
            alive = true;
            break;
          }
        }
        if (alive) continue;
        // Claims left behind keep the row, so the next pass judges them by this worker's timings again.
        if (skipped > 0) continue;
        const { affectedRows } = await db.write(sqlRemoveWorker(tables), [beat.id, beat.heartbeatAt, beat.beats]);
        if (affectedRows > 0) {
          counts.workers++;
          seen.forget(beat.id);
          await db.write(sqlForgetDoorbells(tables), [beat.id]);
        }
      }
      return counts;
    },
  };
}
