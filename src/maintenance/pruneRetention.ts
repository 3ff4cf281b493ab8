import { setTimeout as sleep } from 'node:timers/promises';
import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Params: ?1 retention in microseconds, ?2 batch size. One bounded batch of history past its retention, oldest first. */
const sqlPruneHistory = (t: Tables) => `
DELETE FROM ${t.jobHistory}
WHERE finished_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY finished_at
LIMIT ?`;

/** Params: ?1 retention in microseconds, ?2 batch size. One bounded batch of dead jobs past their retention. */
const sqlPruneDead = (t: Tables) => `
DELETE FROM ${t.deadJobs}
WHERE failed_at < NOW(3) - INTERVAL ? MICROSECOND
ORDER BY failed_at
LIMIT ?`;

export interface RetentionOptions {
  readonly historyRetentionMs: number;
  readonly deadRetentionMs: number;
  readonly batchSize: number;
  /** Most batches per table in one pass; the next pass goes on where this one stopped. */
  readonly maxBatches: number;
  readonly jitterMs: number;
}

/**
 * Retention, continuously: each pass deletes at most maxBatches small batches per table
 * (`DELETE … WHERE <time> < cutoff ORDER BY <time> LIMIT n`, served by the time index, oldest
 * first, a jittered pause between them) — never one big delete that
 * holds locks and swells the undo log. A retention of 0 keeps that table's rows.
 */
export async function pruneRetention(db: Executor, tables: Tables, options: RetentionOptions): Promise<{ history: number; dead: number }> {
  const history = options.historyRetentionMs > 0 ? await pruneInBatches(db, sqlPruneHistory(tables), options.historyRetentionMs, options) : 0;
  const dead = options.deadRetentionMs > 0 ? await pruneInBatches(db, sqlPruneDead(tables), options.deadRetentionMs, options) : 0;
  return { history, dead };
}

async function pruneInBatches(db: Executor, sql: string, retentionMs: number, options: RetentionOptions): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < options.maxBatches; batch++) {
    const { affectedRows } = await db.write(sql, [retentionMs * 1000, options.batchSize]);
    deleted += affectedRows;
    if (affectedRows < options.batchSize) break;
    await sleep(Math.random() * Math.min(options.jitterMs, 50));
  }
  return deleted;
}
