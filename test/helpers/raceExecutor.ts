import type { Knex } from 'knex';
import { type Executor, fromKnex } from '../../src/db/executor.ts';

/**
 * The sluice executor over `knex`, except that `inject` runs once, right before the first
 * transaction opens — a sweep's release (lock with SKIP LOCKED, then update): a race made to
 * happen between the sweep's judgement and its release.
 */
export function beforeFirstTransaction(
  knex: Knex,
  inject: (real: Executor) => Promise<unknown>,
): Executor & { injected: boolean } {
  const real = fromKnex(knex);
  const proxied = new Proxy(real.knex, {
    get(target, property, receiver) {
      if (property !== 'transaction') return Reflect.get(target, property, receiver);
      const transaction = target.transaction.bind(target) as (...args: unknown[]) => Promise<unknown>;
      return async (...args: unknown[]) => {
        if (!exec.injected) {
          exec.injected = true;
          await inject(real);
        }
        return transaction(...args);
      };
    },
  });
  const exec = { ...real, knex: proxied, injected: false };
  return exec;
}
