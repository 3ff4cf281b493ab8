import type { Executor } from './executor.ts';

/** An executor that counts the statements sent through it. */
export interface CountingExecutor extends Executor {
  readonly count: number;
}

/**
 * Wraps `db` so that a call bounded in statements (a listing page, a count) can check how many it
 * has sent, including those the walks it drives send on its behalf.
 */
export function countStatements(db: Executor): CountingExecutor {
  let count = 0;
  return {
    get knex() {
      return db.knex;
    },
    get inTransaction() {
      return db.inTransaction;
    },
    get readCommitted() {
      return db.readCommitted;
    },
    get count() {
      return count;
    },
    ready: () => db.ready(),
    select<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      count++;
      return db.select<T>(sql, params);
    },
    write(sql: string, params?: readonly unknown[]) {
      count++;
      return db.write(sql, params);
    },
  };
}
