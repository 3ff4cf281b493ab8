import { setTimeout as sleep } from 'node:timers/promises';
import type { Tables } from '../db/tables.ts';
import { withTransaction } from '../db/transaction.ts';
import { integerIn } from '../options.ts';
import type { PayloadRedactor } from '../redactPayload.ts';
import { claimKeyOf, workerKeyOf } from '../worker/ClaimTokens.ts';
import { deadLetterExhausted } from './deadLetterExhausted.ts';
import { claimedQueues, type MaintenanceTask, type SkippedRelease, type TaskDb } from './MaintenanceTask.ts';
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

export interface ReleaseStaleClaimsOptions {
  /** Claims of workers that registered none (dead and removed, or of an older version) expire after this. */
  readonly lockTimeoutMs: number;
  readonly batchSize: number;
  /** Most random pause between batches (capped at 100 ms). */
  readonly jitterMs: number;
  /** The clock this process measures liveness on (monotonic, ms). */
  readonly clock: MonotonicClock;
  /** Told of claims it could not release because another transaction holds their rows. */
  readonly onSkipped?: (skipped: SkippedRelease) => void;
  /** The install's redactPayload hook, for the jobs it dead-letters. */
  readonly redactPayload?: PayloadRedactor | null;
}

/** Stale jobs of one claim with one observed extension: released together. */
interface StaleGroup {
  readonly queue: string;
  readonly lockId: string;
  readonly lockedAt: Date;
  readonly ids: number[];
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
  { db, tables }: TaskDb,
  options: ReleaseStaleClaimsOptions,
): MaintenanceTask<'releaseStaleClaims', 'claims' | 'deadLettered'> {
  integerIn('lockTimeoutMs', options.lockTimeoutMs, 1);
  integerIn('batchSize', options.batchSize, 1, 10_000);
  const seen = new UnchangedSince<number>(options.clock);

  /** Reads every claimed job; returns those whose claim stood still for its lock timeout, grouped. */
  async function observe(timeoutOf: (lockId: string) => number): Promise<StaleGroup[]> {
    const stale = new Map<string, StaleGroup>();
    const present = new Set<number>();
    for (const queue of await claimedQueues({ db, tables })) {
      let after = '';
      for (;;) {
        const claims = (await db.select<{ lock_id: string }>(sqlClaims(tables), [queue, after, options.batchSize])).map(
          (r) => r.lock_id,
        );
        if (claims.length === 0) break;
        const jobs = await db.select<{ id: number; lock_id: string; locked_at: Date | null }>(sqlClaimedJobs(tables), [
          queue,
          claims,
        ]);
        for (const job of jobs) {
          const id = Number(job.id);
          present.add(id);
          // (A claim always sets locked_at; only a free job of an older version's release has none.)
          if (job.locked_at === null) continue;
          const stillMs = seen.see(id, `${job.lock_id}/${job.locked_at.getTime()}`);
          if (stillMs < timeoutOf(job.lock_id)) continue;
          const key = `${job.lock_id}/${job.locked_at.getTime()}`;
          const group = stale.get(key) ?? { queue, lockId: job.lock_id, lockedAt: job.locked_at, ids: [] };
          group.ids.push(id);
          stale.set(key, group);
        }
        if (claims.length < options.batchSize) break;
        after = claims[claims.length - 1] as string;
      }
    }
    seen.keepOnly(present);
    return [...stale.values()];
  }

  /** Releases one stale group in slices; returns claims released, jobs dead-lettered and ids skipped. */
  async function release(group: StaleGroup, timeoutMs: number) {
    let claims = 0;
    let deadLettered = 0;
    const skipped: number[] = [];
    for (let i = 0; i < group.ids.length; i += options.batchSize) {
      const ids = group.ids.slice(i, i + options.batchSize);
      const fence = [group.lockId, group.lockedAt];
      const locked = await withTransaction(db, async (tx) => {
        const mine = (await tx.select<{ id: number }>(sqlLockStale(tables), [ids, ...fence])).map((r) => Number(r.id));
        if (mine.length > 0) await tx.write(sqlReleaseStale(tables), [timeoutMs * 1000, mine, ...fence]);
        return mine;
      });
      claims += locked.length;
      for (const id of locked) seen.forget(id);
      deadLettered += await deadLetterExhausted(db, tables, locked, options.batchSize, options.redactPayload ?? null);
      if (locked.length < ids.length) {
        const others = ids.filter((id) => !locked.includes(id));
        skipped.push(
          ...(await db.select<{ id: number }>(sqlStillStale(tables), [others, ...fence])).map((r) => Number(r.id)),
        );
      }
      if (i + options.batchSize < group.ids.length) await sleep(Math.random() * Math.min(options.jitterMs, 100));
    }
    return { claims, deadLettered, skipped };
  }

  return {
    name: 'releaseStaleClaims',
    async runOnce() {
      // By claim key: a lock_id carries its worker's key (ClaimTokens), not its whole id.
      const registered = new Map(
        (await db.select<{ id: string; lock_timeout_ms: number }>(sqlRegisteredTimeouts(tables))).map((r) => [
          workerKeyOf(r.id),
          Number(r.lock_timeout_ms),
        ]),
      );
      const timeoutOf = (lockId: string) => registered.get(claimKeyOf(lockId)) ?? options.lockTimeoutMs;
      let claims = 0;
      let deadLettered = 0;
      for (const group of await observe(timeoutOf)) {
        const result = await release(group, timeoutOf(group.lockId));
        claims += result.claims;
        deadLettered += result.deadLettered;
        if (result.skipped.length > 0) {
          options.onSkipped?.({
            task: 'releaseStaleClaims',
            queue: group.queue,
            workerId: null,
            jobIds: result.skipped,
            reason: `claim ${group.lockId}: another transaction holds their rows (a worker frozen or slow between its writes and its COMMIT?)`,
          });
        }
      }
      return { claims, deadLettered };
    },
  };
}
