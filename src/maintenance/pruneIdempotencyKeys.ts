import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { expireIdempotencyKeys } from '../worker/expireIdempotencyKeys.ts';

/** Params: ?1 batch size. Deletes one bounded batch of keys whose retention ended. affectedRows = keys freed. */
const sqlPruneExpired = (t: Tables) => `
DELETE FROM ${t.idempotencyKeys}
WHERE expires_at < NOW(3)
ORDER BY expires_at
LIMIT ?`;

/** Params: ?1 after job id, ?2 limit. Live keys (no expiry yet), in job id order (ix_expires). */
const sqlLiveKeys = (t: Tables) => `
SELECT job_id
FROM ${t.idempotencyKeys}
WHERE expires_at IS NULL
  AND job_id > ?
ORDER BY job_id
LIMIT ?`;

/** Params: ?1 ids (list). Which of those jobs are still live. */
const sqlLiveJobs = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id IN (?)`;

/**
 * Idempotency-key retention, one bounded step per maintenance pass:
 * 1. orphans: keys still marked live whose job is gone (the worker's expiry write was lost) get
 *    their retention clock started — scanning one page per pass from a cursor that wraps;
 * 2. expired keys are deleted in small batches, freeing them for new jobs.
 */
export class IdempotencyKeyPruner {
  #cursor = 0;

  constructor(
    private readonly db: Executor,
    private readonly tables: Tables,
    private readonly retentionMs: number,
    private readonly batchSize: number,
  ) {}

  async runOnce(): Promise<{ orphansExpired: number; pruned: number }> {
    const live = (await this.db.select<{ job_id: number }>(sqlLiveKeys(this.tables), [this.#cursor, this.batchSize])).map((r) => Number(r.job_id));
    let orphansExpired = 0;
    if (live.length > 0) {
      const still = new Set((await this.db.select<{ id: number }>(sqlLiveJobs(this.tables), [live])).map((r) => Number(r.id)));
      const orphans = live.filter((id) => !still.has(id));
      await expireIdempotencyKeys(this.db, this.tables, orphans, this.retentionMs);
      orphansExpired = orphans.length;
    }
    this.#cursor = live.length < this.batchSize ? 0 : (live[live.length - 1] as number);

    let pruned = 0;
    for (;;) {
      const { affectedRows } = await this.db.write(sqlPruneExpired(this.tables), [this.batchSize]);
      pruned += affectedRows;
      if (affectedRows < this.batchSize) break;
      await sleep(Math.random() * 20);
    }
    return { orphansExpired, pruned };
  }
}
