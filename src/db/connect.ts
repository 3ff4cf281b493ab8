import knexFactory, { type Knex } from 'knex';
import type { Logger } from 'pino';
import { ConnectionError, OptionsError } from '../errors.ts';

export const DEFAULT_URL = 'mysql://root@127.0.0.1:3306/test';

/** The URL sluice connects to: the explicit one, else MYSQL_URL, else the local default. */
export function resolveUrl(url?: string): string {
  return url ?? process.env.MYSQL_URL ?? DEFAULT_URL;
}

/** The URL with its password replaced, for log lines and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}

export interface ConnectOptions {
  readonly url: string;
  /** Largest number of pooled connections. */
  readonly poolMax: number;
  /** Where knex's own messages go (it would print them on the console). */
  readonly logger: Logger;
}

/**
 * A knex instance over mysql2 with the settings every sluice query relies on: UTC session time
 * zone (all times are DATETIME(3) from NOW(3)), JSON returned as strings (parsed by us, the same
 * on MySQL and MariaDB), big ids kept exact.
 */
export function connect({ url, poolMax, logger }: ConnectOptions): Knex {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OptionsError('url', `is not a URL (expected mysql://user:password@host:port/database)`);
  }
  if (parsed.protocol !== 'mysql:' && parsed.protocol !== 'mariadb:') {
    throw new OptionsError('url', `must start with mysql:// (got ${parsed.protocol}//)`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new OptionsError('url', `names no database: ${redactUrl(url)}`);
  return knexFactory({
    client: 'mysql2',
    connection: {
      host: parsed.hostname,
      port: parsed.port ? Number(parsed.port) : 3306,
      user: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      database,
      timezone: 'Z',
      charset: 'utf8mb4',
      jsonStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
    } as Knex.MySql2ConnectionConfig,
    pool: {
      min: 0,
      max: poolMax,
      // UTC for every NOW(3)/DATETIME(3); READ COMMITTED so that no queue statement takes gap
      // locks or shared locks on rows it only reads (INSERT … SELECT, MYSQL.md §1.1–1.2).
      afterCreate(connection: { query(sql: string, cb: (err: Error | null) => void): void }, done: (err: Error | null, c: unknown) => void) {
        // (Two statements: MySQL 8 names the variable transaction_isolation, MariaDB 10.x tx_isolation.)
        // The tables are utf8mb4_bin: a session collation to match keeps comparisons with literals
        // binary and index-friendly (a general_ci session made MariaDB sort whole ranges).
        connection.query("SET NAMES utf8mb4 COLLATE utf8mb4_bin, time_zone = '+00:00'", (zoneError) => {
          if (zoneError) return done(zoneError, connection);
          connection.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED', (isolationError) => done(isolationError, connection));
        });
      },
    },
    acquireConnectionTimeout: 30_000,
    log: {
      warn: (message: unknown) => logger.warn({ component: 'knex' }, describe(message)),
      error: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
      deprecate: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
      debug: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
    },
  });
}

/** knex hands its log hooks strings or errors; errors also reach the caller, so they log at debug. */
function describe(message: unknown): string {
  return message instanceof Error ? message.message : String(message);
}

/** Turns a failed first query into an error that says how to fix it, without the password. */
export function describeConnectionFailure(url: string, error: unknown): ConnectionError {
  const reason = (error as { message?: string } | null)?.message ?? String(error);
  return new ConnectionError(
    `cannot use the database at ${redactUrl(url)}: ${reason}. ` +
      'Set MYSQL_URL=mysql://user:password@host:port/database to point sluice at a MySQL 8.0+ or MariaDB 10.6+ server.',
    { cause: error },
  );
}
