import { setTimeout as sleep } from 'node:timers/promises';
import { fromKnex, type Executor } from './executor.ts';
import { isTransientConflict } from './mysqlErrors.ts';

export interface TransactionOptions {
  /** How many times a deadlock / lock-wait timeout / snapshot conflict re-runs the whole transaction. */
  readonly attempts?: number;
}

/**
 * Runs `fn` in a short READ COMMITTED transaction.
 *
 * On the pool: a transient conflict (1213, 1205, 1020) rolls back and re-runs the whole
 * transaction with jittered backoff. Inside a caller's transaction: `fn` runs under a savepoint,
 * so a failure undoes only our writes; conflicts are propagated, never retried, because a
 * deadlock has already rolled back the caller's whole transaction (MYSQL.md §1.14).
 */
export async function withTransaction<T>(
  db: Executor,
  fn: (tx: Executor) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  if (db.inTransaction) {
    return db.knex.transaction((trx) => fn(fromKnex(trx)));
  }
  const attempts = options.attempts ?? 6;
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.knex.transaction((trx) => fn(fromKnex(trx)), transactionConfig(db));
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= attempts) throw error;
      await sleep(jitteredBackoffMs(attempt));
    }
  }
}

/**
 * READ COMMITTED for our short transactions. Sluice's own pool sets it once per session, so
 * knex's per-transaction `SET TRANSACTION ISOLATION LEVEL` round trip is only needed on an
 * application's knex.
 */
export function transactionConfig(db: Executor): { isolationLevel?: 'read committed' } {
  return db.readCommitted ? {} : { isolationLevel: 'read committed' };
}

/** Retries one autocommit statement that lost a lock conflict (Galera answers 1213 even there). */
export async function retryTransient<T>(fn: () => Promise<T>, attempts = 6): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= attempts) throw error;
      await sleep(jitteredBackoffMs(attempt));
    }
  }
}

/** 5 ms, 10 ms, 20 ms … capped at 500 ms, each scaled by a random factor in [0.5, 1.5). */
function jitteredBackoffMs(attempt: number): number {
  const base = Math.min(500, 5 * 2 ** (attempt - 1));
  return base * (0.5 + Math.random());
}
