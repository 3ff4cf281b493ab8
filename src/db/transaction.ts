import { setTimeout as sleep } from 'node:timers/promises';
import type { Knex } from 'knex';
import { ConnectionError } from '../errors.ts';
import { type Executor, fromKnex } from './executor.ts';
import { isConnectionLoss, isTransientConflict } from './mysqlErrors.ts';
import { conflictBackoffMs, DEFAULT_ATTEMPTS } from './retryTransient.ts';

export interface TransactionOptions {
  /** How many times a transient conflict runs the whole transaction, the first run included. */
  readonly attempts?: number;
}

/**
 * Runs `fn` in a short READ COMMITTED transaction, following the rule in retryTransient.ts: on
 * the pool a transient conflict rolls back and re-runs the whole transaction (fn included) with
 * jittered backoff; inside a caller's transaction `fn` runs under a savepoint, so a failure
 * undoes only our writes, and conflicts go back to the caller, never retried here.
 */
export async function withTransaction<T>(
  db: Executor,
  fn: (tx: Executor) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  await db.ready();
  if (db.inTransaction) {
    return keepingCause((run) => db.knex.transaction(run), fn);
  }
  const attempts = options.attempts ?? DEFAULT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await keepingCause((run) => db.knex.transaction(run, transactionConfig(db)), fn);
    } catch (error) {
      if (!isTransientConflict(error) || attempt >= attempts) throw error;
      await sleep(conflictBackoffMs(attempt));
    }
  }
}

/**
 * Runs one knex transaction and reports why it failed. When `fn` fails because the connection
 * died, knex's ROLLBACK fails too and knex reports that second error ("ROLLBACK - Can't add new
 * command when connection is in closed state"), losing the first. The server rolls back a
 * transaction whose session ended, so: a ConnectionError saying so, the original as its cause.
 * A COMMIT whose connection died has an unknown outcome: a ConnectionError saying that.
 */
async function keepingCause<T>(
  open: (run: (trx: Knex.Transaction) => Promise<T>) => Promise<T>,
  fn: (tx: Executor) => Promise<T>,
): Promise<T> {
  let failure: { error: unknown } | null = null;
  try {
    return await open((trx) =>
      fn(fromKnex(trx)).catch((error: unknown) => {
        failure = { error };
        throw error;
      }),
    );
  } catch (error) {
    const first = (failure as { error: unknown } | null)?.error;
    if (first !== undefined && first !== error) {
      if (isConnectionLoss(first) || isConnectionLoss(error)) {
        throw new ConnectionError(
          `the connection was lost in the middle of a transaction, which the server rolled back: ${messageOf(first)}`,
          { cause: first },
        );
      }
      throw first;
    }
    if (first === undefined && isConnectionLoss(error)) {
      throw new ConnectionError(
        `the connection was lost while the transaction committed: whether it committed is unknown (${messageOf(error)})`,
        { cause: error },
      );
    }
    throw error;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * READ COMMITTED for our short transactions. Sluice's own pool sets it once per session, so
 * knex's per-transaction `SET TRANSACTION ISOLATION LEVEL` round trip is only needed on an
 * application's knex.
 */
export function transactionConfig(db: Executor): { isolationLevel?: 'read committed' } {
  return db.readCommitted ? {} : { isolationLevel: 'read committed' };
}
