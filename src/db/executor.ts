import type { Knex } from 'knex';

/** What a write statement reports. `affectedRows` counts matched rows (mysql2 sets CLIENT_FOUND_ROWS). */
export interface WriteResult {
  readonly affectedRows: number;
  readonly insertId: number;
}

/**
 * The whole database seam: run a SELECT, run a write, open a transaction. Operations take an
 * Executor, so the same code runs on the pool or inside a caller's transaction.
 */
export interface Executor {
  select<T>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  write(sql: string, params?: readonly unknown[]): Promise<WriteResult>;
  /** The knex instance or transaction behind this executor. */
  readonly knex: Knex | Knex.Transaction;
  /** True when this executor is a transaction (ours or the caller's). */
  readonly inTransaction: boolean;
  /** True when every session of this pool already runs READ COMMITTED (sluice's own pool). */
  readonly readCommitted: boolean;
}

/** Wraps a knex instance or a knex transaction (`fromKnex(trx)`: the outbox pattern). */
export function fromKnex(knex: Knex | Knex.Transaction, options: { readCommitted?: boolean } = {}): Executor {
  const inTransaction = 'isTransaction' in knex && knex.isTransaction === true;
  // Values are escaped client-side by mysql2; an empty list is passed as no bindings at all so
  // that SQL built with pre-escaped literals (bulk INSERT) is sent untouched.
  const raw = async (sql: string, params?: readonly unknown[]) => {
    try {
      return await (params && params.length > 0 ? knex.raw(sql, params as Knex.RawBinding[]) : knex.raw(sql));
    } catch (error) {
      throw shortenSqlInMessage(error);
    }
  };
  return {
    knex,
    inTransaction,
    readCommitted: options.readCommitted === true,
    async select<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      const [rows] = (await raw(sql, params)) as [T[], unknown];
      return rows;
    },
    async write(sql: string, params?: readonly unknown[]): Promise<WriteResult> {
      const [header] = (await raw(sql, params)) as [{ affectedRows: number; insertId: number }, unknown];
      return { affectedRows: header.affectedRows, insertId: Number(header.insertId) };
    },
  };
}

const MAX_SQL_IN_MESSAGE = 300;

/**
 * knex prefixes the failed statement to the driver's message. A multi-row INSERT is megabytes
 * long and carries payloads; keep the server's own message and the statement's first characters.
 * The error object itself (errno, code, sqlMessage) is unchanged.
 */
function shortenSqlInMessage(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const sqlMessage = (error as { sqlMessage?: string }).sqlMessage;
  if (error.message.length <= MAX_SQL_IN_MESSAGE + (sqlMessage?.length ?? 0) + 3) return error;
  const sql = error.message.slice(0, MAX_SQL_IN_MESSAGE).replace(/\s+/g, ' ').trim();
  error.message = `${sqlMessage ?? error.message.slice(-200)} (in: ${sql}…)`;
  return error;
}
