import type { Knex } from 'knex';
import { assertSafeSession } from './assertSafeSession.ts';
import { retryTransient } from './retryTransient.ts';

/** What a write statement reports. `affectedRows` counts matched rows (mysql2 sets CLIENT_FOUND_ROWS). */
export interface WriteResult {
  readonly affectedRows: number;
  readonly insertId: number;
}

/**
 * The whole database seam: run a SELECT, run a write, open a transaction. Operations take an
 * Executor, so the same code runs on the pool or inside a caller's transaction. On the pool, each
 * statement is its own transaction and is re-run after a transient conflict (retryTransient.ts);
 * inside a transaction nothing is re-run here.
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
  /** Resolves once the connection is known to be safe to write through (an application's is checked once). */
  ready(): Promise<void>;
}

export interface FromKnexOptions {
  /** True when every session of this pool already runs READ COMMITTED (sluice's own pool). */
  readonly readCommitted?: boolean;
  /**
   * An application's knex or transaction: before the first statement, check that its sessions
   * escape values soundly (assertSafeSession), once per knex instance or transaction.
   */
  readonly foreign?: boolean;
}

/** The safety check of each foreign knex instance or transaction, run once. */
const checkedSessions = new WeakMap<object, Promise<void>>();

/** Wraps a knex instance or a knex transaction (`fromKnex(trx)`: the outbox pattern). */
export function fromKnex(knex: Knex | Knex.Transaction, options: FromKnexOptions = {}): Executor {
  const inTransaction = 'isTransaction' in knex && knex.isTransaction === true;
  // Values are escaped client-side by mysql2; an empty list is passed as no bindings at all so
  // that SQL built with pre-escaped literals (bulk INSERT) is sent untouched.
  const once = async (sql: string, params?: readonly unknown[]) => {
    try {
      return await (params && params.length > 0 ? knex.raw(sql, params as Knex.RawBinding[]) : knex.raw(sql));
    } catch (error) {
      throw withoutSql(error);
    }
  };
  const run = inTransaction
    ? once
    : (sql: string, params?: readonly unknown[]) => retryTransient(() => once(sql, params));
  const ready = options.foreign ? sessionCheck(knex, run) : () => Promise.resolve();
  const raw: Run = options.foreign
    ? async (sql, params) => {
        await ready();
        return run(sql, params);
      }
    : run;
  return {
    knex,
    inTransaction,
    readCommitted: options.readCommitted === true,
    ready,
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

type Run = (sql: string, params?: readonly unknown[]) => Promise<unknown>;

/** The once-per-knex session check of an application's connection (`run` carries its one read). */
function sessionCheck(knex: Knex | Knex.Transaction, run: Run): () => Promise<void> {
  return () => {
    let checked = checkedSessions.get(knex);
    if (!checked) {
      const probe: Executor = {
        knex,
        inTransaction: false,
        readCommitted: false,
        ready: () => Promise.resolve(),
        select: async <T>(sql: string) => ((await run(sql)) as [T[]])[0],
        write: () => Promise.reject(new Error('the session check only reads')),
      };
      checked = assertSafeSession(probe, 'the knex instance or transaction passed to sluice');
      checkedSessions.set(knex, checked);
    }
    return checked;
  };
}

/**
 * knex puts the failed statement in front of the driver's message, and mysql2 keeps it as
 * `error.sql`: a multi-row INSERT is megabytes long and carries payloads, which must not reach a
 * log line or an error message. The error keeps the server's own message, errno and code.
 */
export function withoutSql(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const fields = error as Error & { sql?: string; sqlMessage?: string };
  if (fields.sqlMessage) error.message = fields.sqlMessage;
  else {
    const cut = error.message.lastIndexOf(' - ');
    if (cut >= 0 && /^\s*(SELECT|INSERT|UPDATE|DELETE|SET|CREATE|ALTER|DROP|WITH)\b/i.test(error.message)) {
      error.message = error.message.slice(cut + 3);
    }
  }
  if ('sql' in fields) delete fields.sql;
  return error;
}
