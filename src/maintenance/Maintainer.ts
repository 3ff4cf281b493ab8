import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import type { SluiceContext } from '../context.ts';
import { assertSchemaCurrent } from '../db/migrate.ts';
import { OptionsError } from '../errors.ts';
import type { ResolvedMaintenanceOptions } from '../options.ts';
import { Scheduler } from '../scheduler/Scheduler.ts';
import { ClaimTokens } from '../worker/claimToken.ts';
import { loadHandlers } from '../worker/loadHandlers.ts';
import { deadLetterExhausted } from './deadLetterExhausted.ts';
import { finishBatches } from './finishBatches.ts';
import { IdempotencyKeyPruner } from './pruneIdempotencyKeys.ts';
import { LeaderLease } from './leaderLease.ts';
import { pruneRetention } from './pruneRetention.ts';
import { releaseDeadWorkers } from './releaseDeadWorkers.ts';
import { releaseStaleClaims } from './releaseStaleClaims.ts';

export interface SweepResult {
  /** False when another process holds the lease: nothing was done. */
  readonly leader: boolean;
  readonly released: number;
  readonly deadLettered: number;
  /** Batches marked finished (and completion jobs enqueued) in this pass. */
  readonly batchesFinished: number;
  /** Idempotency keys whose retention ended, deleted in this pass. */
  readonly keysPruned: number;
  /** Workers declared dead (missed heartbeats) and removed from the registry. */
  readonly workersRemoved: number;
  /** Claims of those dead workers released (not counted in `released`). */
  readonly deadWorkerClaims: number;
  /** job_history and dead_jobs rows past their retention, deleted in this pass. */
  readonly historyPruned: number;
  readonly deadPruned: number;
}

const IDLE_PASS = {
  released: 0,
  deadLettered: 0,
  batchesFinished: 0,
  keysPruned: 0,
  workersRemoved: 0,
  deadWorkerClaims: 0,
  historyPruned: 0,
  deadPruned: 0,
} as const;

const LEASE_NAME = 'maintenance';

/**
 * The maintenance process: on a node-cron schedule (each tick delayed by random jitter), take
 * or renew the leader lease, and if we lead, run each service once, in order:
 * releaseDeadWorkers → releaseStaleClaims → deadLetterExhausted → finishBatches →
 * IdempotencyKeyPruner → pruneRetention. runOnce() does one pass and returns its counts.
 */
export class Maintainer {
  readonly holder = `${ClaimTokens.processPrefix}~${randomBytes(4).toString('hex')}`;
  readonly #lease: LeaderLease;
  readonly #keys: IdempotencyKeyPruner;
  #task: ScheduledTask | undefined;
  #scheduler: Scheduler | undefined;
  #pass: Promise<SweepResult> | null = null;
  #leading = false;
  #stopped = false;

  constructor(
    private readonly ctx: SluiceContext,
    readonly options: ResolvedMaintenanceOptions,
  ) {
    if (!cron.validate(options.schedule)) throw new OptionsError('schedule', `is not a valid cron expression: ${JSON.stringify(options.schedule)}`);
    this.#lease = new LeaderLease(ctx.db, ctx.tables, LEASE_NAME, this.holder, options.leaseMs);
    this.#keys = new IdempotencyKeyPruner(ctx.db, ctx.tables, ctx.options.idempotencyRetentionMs, options.batchSize);
  }

  get leading(): boolean {
    return this.#leading;
  }

  async start(): Promise<void> {
    await assertSchemaCurrent(this.ctx.db, this.ctx.tables);
    if (this.options.jobs !== null) {
      const definitions = [...(await loadHandlers(this.options.jobs)).values()];
      this.#scheduler = new Scheduler(this.ctx, definitions, this.options.scheduleJitterMs);
      this.#scheduler.start();
    }
    this.#task = cron.schedule(this.options.schedule, () => this.#tick(), { noOverlap: true, name: `sluice-maintenance-${this.holder}` });
  }

  /** One pass. Concurrent calls share the pass in progress. */
  runOnce(): Promise<SweepResult> {
    this.#pass ??= this.#runPass().finally(() => {
      this.#pass = null;
    });
    return this.#pass;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#task?.destroy();
    await this.#scheduler?.stop();
    await this.#pass?.catch(() => undefined);
    if (this.#leading) {
      await this.#lease.release().catch(() => undefined);
      this.#setLeading(false);
    }
  }

  async #tick(): Promise<void> {
    await sleep(Math.random() * this.options.jitterMs);
    if (this.#stopped) return;
    try {
      await this.runOnce();
    } catch (error) {
      this.ctx.events.emit('maintenance:error', { holder: this.holder, error: error as Error, context: 'sweep' });
    }
  }

  async #runPass(): Promise<SweepResult> {
    const started = performance.now();
    const leader = await this.#lease.acquire().catch((error: unknown) => {
      this.#setLeading(false);
      throw error;
    });
    this.#setLeading(leader);
    if (!leader) {
      const result = { leader, ...IDLE_PASS };
      this.ctx.events.emit('sweep:completed', { holder: this.holder, ...result, durationMs: 0 });
      return result;
    }
    const { db, tables } = this.ctx;
    const { lockTimeoutMs, batchSize, jitterMs, missedHeartbeats, maxPruneBatches } = this.options;
    const deadWorkers = await releaseDeadWorkers(db, tables, { missedHeartbeats, batchSize });
    const { released, ids } = await releaseStaleClaims(db, tables, { lockTimeoutMs, batchSize, jitterMs });
    const releasedIds = [...deadWorkers.ids, ...ids];
    const deadLettered = releasedIds.length > 0 ? await deadLetterExhausted(db, tables, releasedIds, batchSize) : 0;
    const { finished } = await finishBatches(db, tables, batchSize);
    for (const batch of finished) this.ctx.events.emit('batch:finished', { holder: this.holder, ...batch });
    const { pruned: keysPruned } = await this.#keys.runOnce();
    const { historyRetentionMs, deadRetentionMs } = this.ctx.options;
    const pruned = await pruneRetention(db, tables, { historyRetentionMs, deadRetentionMs, batchSize, maxBatches: maxPruneBatches, jitterMs });
    const result = {
      leader,
      released,
      deadLettered,
      batchesFinished: finished.length,
      keysPruned,
      workersRemoved: deadWorkers.workers.length,
      deadWorkerClaims: deadWorkers.released,
      historyPruned: pruned.history,
      deadPruned: pruned.dead,
    };
    this.ctx.events.emit('sweep:completed', { holder: this.holder, ...result, durationMs: Math.round(performance.now() - started) });
    return result;
  }

  #setLeading(leading: boolean): void {
    if (leading === this.#leading) return;
    this.#leading = leading;
    this.ctx.events.emit(leading ? 'leader:acquired' : 'leader:lost', { holder: this.holder, lease: LEASE_NAME });
  }
}
