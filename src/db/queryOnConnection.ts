import type { Knex } from 'knex';
import { withoutSql } from './executor.ts';

/** A connection of knex's pool, as mysql2 made it: the callback form of its query. */
interface HeldConnection {
  query(
    sql: string,
    values: readonly unknown[],
    callback: (error: Error | null, rows: unknown, fields: unknown) => void,
  ): void;
}

/**
 * One statement on a connection the caller holds (acquired from knex's pool), straight to mysql2:
 * `?` placeholders escaped by mysql2 on the client (a list for `IN (?)`), the result as knex.raw
 * gives it on MySQL ([rows, fields]). knex.raw would build a runner, a query object and a promise
 * chain per statement; for a ringer that sends one statement per round, that was most of its client
 * CPU. The statement is announced on knex's 'query' event like any other.
 */
export function queryOnConnection(
  knex: Knex,
  connection: unknown,
  sql: string,
  values: readonly unknown[] = [],
): Promise<[unknown, unknown]> {
  if (knex.listenerCount('query') > 0) knex.emit('query', { sql, bindings: values });
  return new Promise((resolve, reject) => {
    try {
      (connection as HeldConnection).query(sql, values, (error, rows, fields) => {
        if (error) reject(withoutSql(error));
        else resolve([rows, fields]);
      });
    } catch (error) {
      reject(error);
    }
  });
}
