import { escapeLike } from '../db/escapeLike.ts';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import type { CancelOptions } from '../jobControl/cancelJobs.ts';
import { workerKeyOf } from '../model/claimKey.ts';
import { defined, integerIn, numberAtLeast } from '../options.ts';
import type { PayloadRedactor } from '../payloadRedactor.ts';
import type { MaintenanceTask, SkippedRelease, TaskDb } from '../task/MaintenanceTask.ts';
import { claimedQueues } from './claimedQueues.ts';
import { type Beat, DeadWorkerWatch } from './DeadWorkerWatch.ts';
import { type DeadLetterRules, deadLetterExhausted } from './deadLetterExhausted.ts';
import { MAINTENANCE_DEFAULTS } from './maintenanceOptions.ts';
import { recordReleasedAttempts } from './recordReleasedAttempts.ts';
import type { MonotonicClock } from './UnchangedSince.ts';

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

/** releaseDeadWorkers' options. Every field is optional. */
export interface ReleaseDeadWorkersOptions {
  /** A worker whose beat stood still for this many of its own heartbeat intervals is dead. @defaultValue 2.5 */
  readonly missedHeartbeats?: number;
  /** Registry rows per page, and claims per release. @defaultValue 500 */
  readonly batchSize?: number;
  /** The clock this process measures liveness on (monotonic, ms). @defaultValue performance.now */
  readonly clock?: MonotonicClock;
  /** Told of claims it could not release because another transaction holds their rows. @defaultValue none */
  readonly onSkipped?: ((skipped: SkippedRelease) => void) | null;
  /** The install's redactPayload hook, for the jobs it dead-letters. @defaultValue none */
  readonly redactPayload?: PayloadRedactor | null;
  /** The install's keptAttempts: each released claim is recorded as its attempt's error (0: none). @defaultValue 0 */
  readonly keptAttempts?: number;
  /** How the dependents of a job it dead-letters are cancelled (as a cancel keeps them). @defaultValue no history */
  readonly cancel?: CancelOptions;
  /** Told of the queues of jobs a dead-lettering released (the maintenance process rings their workers). @defaultValue none */
  readonly onReleased?: ((queues: ReadonlyMap<string, number>) => void) | null;
}

export type ResolvedReleaseDeadWorkersOptions = Readonly<Required<ReleaseDeadWorkersOptions>>;

function resolveReleaseDeadWorkersOptions(options: ReleaseDeadWorkersOptions): ResolvedReleaseDeadWorkersOptions {
  const { missedHeartbeats, batchSize, clock } = MAINTENANCE_DEFAULTS;
  const r = {
    missedHeartbeats,
    batchSize,
    clock,
    onSkipped: null,
    redactPayload: null,
    keptAttempts: 0,
    cancel: { history: false, keyRetentionMs: 0 },
    onReleased: null,
    ...defined(options),
  };
  numberAtLeast('missedHeartbeats', r.missedHeartbeats, 1.5);
  integerIn('batchSize', r.batchSize, 1, 10_000);
  return r;
}

type Counts = { workers: number; claims: number; deadLettered: number };

/**
 * The fast recovery path: a worker whose beat (heartbeat_at, beats) has not changed for
 * `missedHeartbeats` of its own heartbeat intervals — measured between this process's own
 * observations, on its own clock — is dead: its claims go back to the queue at once
 * (retry_times + 1) instead of after the (much longer) lock timeout, its exhausted jobs are
 * dead-lettered, and its registry row is removed (who is dead: DeadWorkerWatch). A process that
 * starts watching (or takes the lease) therefore waits one such window before it declares anyone
 * dead: observe() lets a standby keep watching so that a take-over can act at once.
 *
 * Releases never wait on a row lock: each is a short transaction that locks the claims with SKIP
 * LOCKED and releases what it locked; claims whose rows another transaction holds (a worker frozen
 * mid-commit) are reported through onSkipped and tried again next pass, and the worker's row stays
 * until they are released.
 */
export function releaseDeadWorkers(
  taskDb: TaskDb,
  options: ReleaseDeadWorkersOptions = {},
): MaintenanceTask<'releaseDeadWorkers', keyof Counts, ResolvedReleaseDeadWorkersOptions> {
  return new DeadWorkerRelease(taskDb, options);
}

class DeadWorkerRelease
  implements MaintenanceTask<'releaseDeadWorkers', keyof Counts, ResolvedReleaseDeadWorkersOptions>
{
  readonly name = 'releaseDeadWorkers';
  readonly options: ResolvedReleaseDeadWorkersOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  readonly #beats: DeadWorkerWatch;

  constructor({ db, tables }: TaskDb, options: ReleaseDeadWorkersOptions) {
    this.options = resolveReleaseDeadWorkersOptions(options);
    this.#db = db;
    this.#tables = tables;
    this.#beats = new DeadWorkerWatch(db, tables, this.options);
  }
  /** What its dead-lettering follows: the install's redaction, and how a dead job's dependents are kept. */
  get #deadLetterRules(): DeadLetterRules {
    const { redactPayload: redact, cancel, onReleased } = this.options;
    return { redact, cancel, onReleased };
  }

  async observe(): Promise<void> {
    await this.#beats.dead();
  }

  async runOnce(): Promise<Counts> {
    const dead = await this.#beats.dead();
    const counts = { workers: 0, claims: 0, deadLettered: 0 };
    const queues = dead.length > 0 ? await claimedQueues({ db: this.#db, tables: this.#tables }) : [];
    for (const beat of dead) await this.#releaseWorker(beat, queues, counts);
    return counts;
  }

  /**
   * Gives one dead worker's claims back, queue by queue, then removes its registry row — unless it
   * beat again meanwhile (it keeps its claims and its row) or some claims were skipped.
   */
  async #releaseWorker(beat: Beat, queues: readonly string[], counts: Counts): Promise<void> {
    // A worker id without a claim key (a worker of a sluice before the short lock_id) holds no
    // claim: migration 202611250101 refuses to run while such claims exist.
    const key = workerKeyOf(beat.id);
    let skipped = 0;
    if (key !== null) {
      for (const queue of queues) {
        const result = await this.#releaseIn(queue, beat, `${escapeLike(key)}.%`, counts);
        skipped += this.#reportSkipped(queue, beat.id, result.skipped);
        if (result.alive) return;
      }
    }
    // Claims left behind keep the row, so the next pass judges them by this worker's timings again.
    if (skipped > 0) return;
    counts.workers += await this.#removeWorker(beat);
  }

  /** Releases one dead worker's claims in one queue, a page at a time; alive if it turned out to be. */
  async #releaseIn(
    queue: string,
    beat: Beat,
    pattern: string,
    counts: Counts,
  ): Promise<{ alive: boolean; skipped: number[] }> {
    const { batchSize } = this.options;
    const skipped: number[] = [];
    let after = 0;
    for (;;) {
      const ids = await this.#selectIds(sqlClaimsOf(this.#tables), [queue, pattern, after, batchSize]);
      if (ids.length === 0) break;
      after = ids[ids.length - 1] as number;
      const { locked, released } = await this.#release(ids, pattern, beat);
      // Nothing released although claims were locked: the worker beat again since it was judged.
      if (locked.length > 0 && released === 0) return { alive: true, skipped };
      counts.claims += released;
      counts.deadLettered += await deadLetterExhausted(
        this.#db,
        this.#tables,
        locked,
        batchSize,
        this.#deadLetterRules,
      );
      if (locked.length < ids.length) {
        const others = ids.filter((id) => !locked.includes(id));
        skipped.push(...(await this.#selectIds(sqlStillHeld(this.#tables), [others, pattern])));
      }
      if (ids.length < batchSize) break;
    }
    return { alive: false, skipped };
  }

  /** Locks those claims nobody else holds and releases them if the worker still shows `beat`, in one transaction. */
  #release(ids: number[], pattern: string, beat: Beat): Promise<{ locked: number[]; released: number }> {
    return withTransaction(this.#db, async (tx) => {
      const locked = (await tx.select<{ id: number }>(sqlLockClaims(this.#tables), [ids, pattern])).map((r) =>
        Number(r.id),
      );
      if (locked.length === 0) return { locked, released: 0 };
      const fence = [beat.id, beat.heartbeatAt, beat.beats];
      const { affectedRows } = await tx.write(sqlRelease(this.#tables), [locked, pattern, ...fence]);
      await recordReleasedAttempts(tx, this.#tables, locked, { workerId: beat.id }, this.options.keptAttempts);
      return { locked, released: affectedRows };
    });
  }

  /** The ids a statement returns, as numbers. */
  async #selectIds(sql: string, params: readonly unknown[]): Promise<number[]> {
    return (await this.#db.select<{ id: number }>(sql, params)).map((r) => Number(r.id));
  }

  /** Tells onSkipped of claims in `queue` whose rows another transaction holds; returns how many. */
  #reportSkipped(queue: string, workerId: string, jobIds: number[]): number {
    if (jobIds.length > 0) {
      this.options.onSkipped?.({
        task: this.name,
        queue,
        workerId,
        jobIds,
        reason: 'another transaction holds their rows (a worker frozen or slow between its writes and its COMMIT?)',
      });
    }
    return jobIds.length;
  }

  /** Removes the worker's row if it still shows the beat judged dead, and then its doorbells; 1 if removed. */
  async #removeWorker(beat: Beat): Promise<number> {
    const { affectedRows } = await this.#db.write(sqlRemoveWorker(this.#tables), [
      beat.id,
      beat.heartbeatAt,
      beat.beats,
    ]);
    if (affectedRows === 0) return 0;
    this.#beats.forget(beat.id);
    await this.#db.write(sqlForgetDoorbells(this.#tables), [beat.id]);
    return 1;
  }
}
