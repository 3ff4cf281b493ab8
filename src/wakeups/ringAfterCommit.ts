import type { Knex } from 'knex';
import type { Ringer } from './Ringer.ts';

/** What a ring needs of an install: its ringer and its table prefix (a SluiceRuntime has both). */
export interface RingTarget {
  readonly ringer: Pick<Ringer, 'ring'>;
  readonly tables: { readonly prefix: string };
}

/**
 * Wakes the workers of the queues an enqueue wrote to, once its jobs are visible: at once after
 * sluice's own transaction, or, inside the caller's transaction, when the outermost transaction
 * commits (never on a rollback, never before the commit: a worker woken early would find nothing
 * and sleep on). A transaction the caller commits by hand outside knex's promise (`trx.commit()`
 * called on a transaction made with `knex.transaction()` without a handler) still resolves it.
 */
export function ringAfterCommit(
  runtime: RingTarget,
  trx: Knex.Transaction | undefined,
  queues: ReadonlyMap<string, number>,
): void {
  if (queues.size === 0) return;
  // Sluice's own commit, the common single enqueue: no closure to make.
  if (!trx) {
    runtime.ringer.ring(runtime.tables.prefix, queues);
    return;
  }
  let outermost = trx;
  while (outermost.parentTransaction) outermost = outermost.parentTransaction;
  outermost.executionPromise.then(
    () => runtime.ringer.ring(runtime.tables.prefix, queues),
    () => undefined,
  );
}
