import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import type { CancelOptions } from '../jobControl/cancelJobs.ts';
import { claimKeyOf, workerKeyOf } from '../model/claimKey.ts';
import { defined, integerIn } from '../options.ts';
import type { PayloadRedactor } from '../payloadRedactor.ts';
import type { MaintenanceTask, SkippedRelease, TaskDb } from '../task/MaintenanceTask.ts';
import { claimedQueues } from './claimedQueues.ts';
import { type DeadLetterRules, deadLetterExhausted } from './deadLetterExhausted.ts';
import { MAINTENANCE_DEFAULTS } from './maintenanceOptions.ts';
import { recordReleasedAttempts } from './recordReleasedAttempts.ts';
import { type MonotonicClock, UnchangedSince } from './UnchangedSince.ts';

/** Params: none. The lock timeout each registered worker heartbeats against (one row per worker). */
const sqlRegisteredTimeouts = (t: Tables) => `
SELECT id, lock_timeout_ms
FROM ${t.workers}
WHERE lock_timeout_ms IS NOT NULL`;

/**
 * Params: ?1 queue, ?2 after this lock_id, ?3 limit. One page of the queue's claims (distinct
 * lock_ids, in order), read from ix_head's claimed range of the queue (lock_id > ''): the jobs in
 * flight, never the free or delayed backlog. The index is forced: on a small or skewed table the
 * optimizer may prefer another index, which walks the whole queue.
 */
const sqlClaims = (t: Tables) => `
SELECT lock_id
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?
  AND lock_id > ?
GROUP BY lock_id
ORDER BY lock_id
LIMIT ?`;

/**
 * Params: ?1 queue, ?2 lock_ids (list). The jobs those claims hold, each with its locked_at as
 * written (by NOW(3) on whichever server the worker used: only compared with what this process
 * read of it before, never with a clock).
 */
const sqlClaimedJobs = (t: Tables) => `
SELECT id, lock_id, locked_at
FROM ${t.jobs} FORCE INDEX (ix_head)
WHERE queue = ?
  AND lock_id IN (?)`;

/**
 * Params: ?1 ids (list), ?2 lock_id, ?3 locked_at, both as observed. Locks those jobs that still
 * carry exactly the observed claim and extension, skipping rows another transaction holds (a
 * worker frozen between its exactly-once DELETE and its COMMIT holds its row until its
 * transaction ends: waiting for it would stop every release behind it). Returns their ids.
 */
const sqlLockStale = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ?
  AND locked_at = ?
FOR UPDATE SKIP LOCKED`;

/**
 * Params: ?1 lock timeout in microseconds, ?2 ids (list, locked), ?3 lock_id, ?4 locked_at.
 * Releases those claims, fenced on the observed claim and extension (a heartbeat since would have
 * moved locked_at; a job its worker retried or released since is free), bumping retry_times: the
 * claim's attempt counts as failed. affectedRows = claims released.
 */
const sqlReleaseStale = (t: Tables) => `
UPDATE ${t.jobs}
SET last_error = CONCAT('claim ', lock_id, ' expired after ', ? DIV 1000, ' ms without a heartbeat (worker died or stalled)'),
    lock_id = '',
    locked_at = DEFAULT,
    retry_times = retry_times + 1
WHERE id IN (?)
  AND lock_id = ?
  AND locked_at = ?`;

/** Params: ?1 ids (list), ?2 lock_id, ?3 locked_at. Which of those still carry the observed claim (a plain read). */
const sqlStillStale = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)
  AND lock_id = ?
  AND locked_at = ?`;

/** releaseStaleClaims' options. Every field is optional. */
export interface ReleaseStaleClaimsOptions {
  /** Claims of workers that registered none (dead and removed, or of an older version) expire after this. @defaultValue 30,000 */
  readonly lockTimeoutMs?: number;
  /** Claims per page and per release. @defaultValue 500 */
  readonly batchSize?: number;
  /** Most random pause between batches (capped at 100 ms). @defaultValue 1,000 */
  readonly jitterMs?: number;
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

export type ResolvedReleaseStaleClaimsOptions = Readonly<Required<ReleaseStaleClaimsOptions>>;

function resolveReleaseStaleClaimsOptions(options: ReleaseStaleClaimsOptions): ResolvedReleaseStaleClaimsOptions {
  const { lockTimeoutMs, batchSize, jitterMs, clock } = MAINTENANCE_DEFAULTS;
  const r = {
    lockTimeoutMs,
    batchSize,
    jitterMs,
    clock,
    onSkipped: null,
    redactPayload: null,
    keptAttempts: 0,
    cancel: { history: false, keyRetentionMs: 0 },
    onReleased: null,
    ...defined(options),
  };
  integerIn('lockTimeoutMs', r.lockTimeoutMs, 1);
  integerIn('batchSize', r.batchSize, 1, 10_000);
  integerIn('jitterMs', r.jitterMs, 0);
  return r;
}

/** Stale jobs of one claim with one observed extension: released together. */
interface StaleGroup {
  readonly queue: string;
  readonly lockId: string;
  readonly lockedAt: Date;
  readonly ids: number[];
}

/** What releasing one stale group did: claims released, jobs dead-lettered, and ids skipped. */
interface GroupRelease {
  claims: number;
  deadLettered: number;
  readonly skipped: number[];
}

/**
 * The maintenance process's fallback for claims nobody extends. Each pass reads every claimed job of every
 * queue (ix_head's claimed range: the jobs in flight) and notes when, on this process's own
 * monotonic clock, it first saw each job's current (lock_id, locked_at); a claim whose value has
 * not changed for its lock timeout of that clock is stale. A claim of a registered worker follows
 * the lock timeout that worker registered — the one its heartbeat keeps well inside — so a
 * maintenance process started with a shorter lockTimeoutMs cannot take back a live worker's
 * claims, and a worker with a longer one is not cut short. A process that has just started (or
 * just taken the lease) waits one lock timeout before it releases anything.
 *
 * Releases are fenced on the observed values and never wait on a row lock (SKIP LOCKED, in one
 * short transaction per claim, re-run whole by withTransaction after a transient conflict);
 * claims another transaction holds are reported through onSkipped and tried again next pass.
 * Released jobs past an explicit maxRetries are dead-lettered at once.
 */
export function releaseStaleClaims(
  taskDb: TaskDb,
  options: ReleaseStaleClaimsOptions = {},
): MaintenanceTask<'releaseStaleClaims', 'claims' | 'deadLettered', ResolvedReleaseStaleClaimsOptions> {
  return new StaleClaimRelease(taskDb, options);
}

class StaleClaimRelease
  implements MaintenanceTask<'releaseStaleClaims', 'claims' | 'deadLettered', ResolvedReleaseStaleClaimsOptions>
{
  readonly name = 'releaseStaleClaims';
  readonly options: ResolvedReleaseStaleClaimsOptions;
  readonly #db: Executor;
  readonly #tables: Tables;
  /** Each claimed job's (lock_id, locked_at) as last read, and since when (on this process's clock) it has not changed. */
  readonly #seen: UnchangedSince<number>;

  constructor({ db, tables }: TaskDb, options: ReleaseStaleClaimsOptions) {
    this.options = resolveReleaseStaleClaimsOptions(options);
    this.#db = db;
    this.#tables = tables;
    this.#seen = new UnchangedSince<number>(this.options.clock);
  }
  /** What its dead-lettering follows: the install's redaction, and how a dead job's dependents are kept. */
  get #deadLetterRules(): DeadLetterRules {
    const { redactPayload: redact, cancel, onReleased } = this.options;
    return { redact, cancel, onReleased };
  }

  async runOnce(): Promise<{ claims: number; deadLettered: number }> {
    const timeoutOf = await this.#lockTimeouts();
    let claims = 0;
    let deadLettered = 0;
    for (const group of await this.#staleGroups(timeoutOf)) {
      const result = await this.#releaseGroup(group, timeoutOf(group.lockId));
      claims += result.claims;
      deadLettered += result.deadLettered;
      this.#reportSkipped(group, result.skipped);
    }
    return { claims, deadLettered };
  }

  /** The lock timeout each claim follows: the one its worker registered, else options.lockTimeoutMs. */
  async #lockTimeouts(): Promise<(lockId: string) => number> {
    const rows = await this.#db.select<{ id: string; lock_timeout_ms: number }>(sqlRegisteredTimeouts(this.#tables));
    // By claim key: a lock_id carries its worker's key (ClaimTokens), not its whole id.
    const registered = new Map(rows.map((r) => [workerKeyOf(r.id), Number(r.lock_timeout_ms)]));
    return (lockId) => registered.get(claimKeyOf(lockId)) ?? this.options.lockTimeoutMs;
  }

  /** Reads every claimed job; returns those whose claim stood still for its lock timeout, grouped. */
  async #staleGroups(timeoutOf: (lockId: string) => number): Promise<StaleGroup[]> {
    const stale = new Map<string, StaleGroup>();
    const present = new Set<number>();
    for (const queue of await claimedQueues({ db: this.#db, tables: this.#tables })) {
      for await (const job of this.#claimedJobs(queue)) {
        const id = Number(job.id);
        present.add(id);
        // (A claim always sets locked_at; only a free job of an older version's release has none.)
        if (job.locked_at === null) continue;
        const claim = `${job.lock_id}/${job.locked_at.getTime()}`;
        if (this.#seen.see(id, claim) < timeoutOf(job.lock_id)) continue;
        const group = stale.get(claim) ?? { queue, lockId: job.lock_id, lockedAt: job.locked_at, ids: [] };
        group.ids.push(id);
        stale.set(claim, group);
      }
    }
    this.#seen.keepOnly(present);
    return [...stale.values()];
  }

  /** The claimed jobs of one queue, read a page of claims (distinct lock_ids) at a time. */
  async *#claimedJobs(queue: string) {
    const { batchSize } = this.options;
    let after = '';
    for (;;) {
      const page = await this.#db.select<{ lock_id: string }>(sqlClaims(this.#tables), [queue, after, batchSize]);
      const claims = page.map((r) => r.lock_id);
      if (claims.length === 0) return;
      yield* await this.#db.select<{ id: number; lock_id: string; locked_at: Date | null }>(
        sqlClaimedJobs(this.#tables),
        [queue, claims],
      );
      if (claims.length < batchSize) return;
      after = claims[claims.length - 1] as string;
    }
  }

  /** Releases one stale group, a slice of batchSize at a time with a jittered pause between. */
  async #releaseGroup(group: StaleGroup, timeoutMs: number): Promise<GroupRelease> {
    const { batchSize, jitterMs } = this.options;
    const result: GroupRelease = { claims: 0, deadLettered: 0, skipped: [] };
    for (let i = 0; i < group.ids.length; i += batchSize) {
      const ids = group.ids.slice(i, i + batchSize);
      const locked = await this.#release(group, ids, timeoutMs);
      result.claims += locked.length;
      for (const id of locked) this.#seen.forget(id);
      result.deadLettered += await deadLetterExhausted(
        this.#db,
        this.#tables,
        locked,
        batchSize,
        this.#deadLetterRules,
      );
      if (locked.length < ids.length) {
        const others = ids.filter((id) => !locked.includes(id));
        const still = await this.#db.select<{ id: number }>(sqlStillStale(this.#tables), [others, ...fenceOf(group)]);
        result.skipped.push(...still.map((r) => Number(r.id)));
      }
      if (i + batchSize < group.ids.length) await sleep(Math.random() * Math.min(jitterMs, 100));
    }
    return result;
  }

  /** Locks those of `ids` that still carry the group's claim and nobody else holds, and releases them; returns their ids. */
  #release(group: StaleGroup, ids: number[], timeoutMs: number): Promise<number[]> {
    return withTransaction(this.#db, async (tx) => {
      const fence = fenceOf(group);
      const locked = (await tx.select<{ id: number }>(sqlLockStale(this.#tables), [ids, ...fence])).map((r) =>
        Number(r.id),
      );
      if (locked.length > 0) await tx.write(sqlReleaseStale(this.#tables), [timeoutMs * 1000, locked, ...fence]);
      await recordReleasedAttempts(tx, this.#tables, locked, { lockId: group.lockId }, this.options.keptAttempts);
      return locked;
    });
  }

  /** Tells onSkipped of the group's jobs whose rows another transaction holds. */
  #reportSkipped(group: StaleGroup, jobIds: number[]): void {
    if (jobIds.length === 0) return;
    this.options.onSkipped?.({
      task: this.name,
      queue: group.queue,
      workerId: null,
      jobIds,
      reason: `claim ${group.lockId}: another transaction holds their rows (a worker frozen or slow between its writes and its COMMIT?)`,
    });
  }
}

/** The claim and extension a release is fenced on, as the statements take them. */
function fenceOf(group: StaleGroup): [string, Date] {
  return [group.lockId, group.lockedAt];
}
