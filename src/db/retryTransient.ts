import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientConflict } from './mysqlErrors.ts';

/**
 * The one rule for transient conflicts — a deadlock (1213, also how Galera reports a failed
 * certification), a lock-wait timeout (1205), MariaDB's snapshot conflict (1020) or an AUTO-INC
 * deadlock (1467): **whoever owns the transaction re-runs it.**
 *
 * - An autocommit statement on sluice's pool is its own transaction: the Executor re-runs it
 *   (fromKnex, through retryTransient). The server rolled the statement back, so running it again
 *   is the same statement, not a second effect.
 * - A transaction sluice opens is re-run whole by withTransaction, its function included.
 * - Inside a caller's transaction nothing is retried: the server already rolled back (or, for
 *   1205, doomed) the caller's whole transaction, so the error goes back to the caller, who owns it.
 * - Operations never retry on their own and callers never wrap operations: an operation file
 *   states in its header which of the three cases it is in.
 */
export function retryTransient<T>(fn: () => Promise<T>, attempts = DEFAULT_ATTEMPTS): Promise<T> {
  // The first run costs one catch handler, no async frame: an autocommit enqueue passes here once per job.
  try {
    return fn().catch((error: unknown) => retryAfter(error, fn, attempts));
  } catch (error) {
    return retryAfter(error, fn, attempts);
  }
}

async function retryAfter<T>(first: unknown, fn: () => Promise<T>, attempts: number): Promise<T> {
  let error = first;
  for (let attempt = 1; ; attempt++) {
    if (!isTransientConflict(error) || attempt >= attempts) throw error;
    await sleep(conflictBackoffMs(attempt));
    try {
      return await fn();
    } catch (next) {
      error = next;
    }
  }
}

/** How many times a conflict is run again in all, the first run included. */
export const DEFAULT_ATTEMPTS = 6;

/** 5 ms, 10 ms, 20 ms … capped at 500 ms, each scaled by a random factor in [0.5, 1.5). */
export function conflictBackoffMs(attempt: number): number {
  const base = Math.min(500, 5 * 2 ** (attempt - 1));
  return base * (0.5 + Math.random());
}
