import { readFileSync } from 'node:fs';
import knexFactory, { type Knex } from 'knex';
import { format as formatSql } from 'mysql2';
import type { Logger } from 'pino';
import { OptionsError } from '../errors.ts';
import { parseMysqlUrl } from './parseMysqlUrl.ts';

/**
 * The URL sluice connects to: the explicit one, else the environment's (urlFromEnvironment). With
 * none, OptionsError: sluice never guesses a server (a forgotten export once wrote an app's jobs to
 * root@localhost's `test` database).
 */
export function resolveUrl(url?: string): string {
  if (url !== undefined) return url;
  const fromEnvironment = urlFromEnvironment();
  if (fromEnvironment !== null) return fromEnvironment;
  throw new OptionsError(
    'url',
    'is not given and neither MYSQL_URL nor MYSQL_URL_FILE is set: sluice does not guess a server. ' +
      'Set MYSQL_URL=mysql://user:password@host:3306/database, or pass url (--url on the command line) or your own knex',
  );
}

/**
 * MYSQL_URL, else the contents of the file MYSQL_URL_FILE names (a secret file: keeps the password
 * out of the environment PM2 saves and shows), else null.
 */
export function urlFromEnvironment(): string | null {
  if (process.env.MYSQL_URL) return process.env.MYSQL_URL;
  const file = process.env.MYSQL_URL_FILE;
  if (!file) return null;
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new OptionsError(
      'url',
      `MYSQL_URL_FILE names ${file}, which cannot be read (${(error as NodeJS.ErrnoException).code})`,
    );
  }
}

/**
 * Params: none. Every session of sluice's pool, before its first statement:
 * - utf8mb4 with the tables' binary collation: comparisons with literals stay binary and
 *   index-friendly (a general_ci session made MariaDB sort whole ranges);
 * - UTC, for every NOW(3) and DATETIME(3);
 * - a pinned sql_mode. mysql2 escapes values on the client with backslashes; a server whose
 *   sql_mode holds NO_BACKSLASH_ESCAPES would read those backslashes as text and let a crafted
 *   value end its string literal early (an injection). The pinned mode is strict and has no
 *   NO_BACKSLASH_ESCAPES, whatever the server's default.
 */
export const SQL_SESSION = `
SET NAMES utf8mb4 COLLATE utf8mb4_bin,
    time_zone = '+00:00',
    sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'`;

/**
 * SQL_SESSION, plus on MariaDB a bound on an open transaction left idle (a worker frozen
 * mid-commit): a MariaDB-only assignment inside an executable comment, which MySQL reads as a
 * comment (it has no idle-transaction timeout) and MariaDB 10.3+ runs. Same round trip.
 */
function sessionSql(idleTransactionTimeoutMs: number): string {
  if (idleTransactionTimeoutMs <= 0) return SQL_SESSION;
  return `${SQL_SESSION} /*M!100300 , idle_transaction_timeout = ${Math.ceil(idleTransactionTimeoutMs / 1000)} */`;
}

/**
 * Params: none. READ COMMITTED, so that no queue statement takes gap locks or shared locks on rows
 * it only reads (an INSERT … SELECT under REPEATABLE READ locks what it reads: MySQL reference
 * manual, "Locks Set by Different SQL Statements in InnoDB"). A statement of its own: MySQL 8
 * names the variable transaction_isolation, MariaDB 10.x tx_isolation; this form suits both.
 */
const SQL_ISOLATION = 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED';

/**
 * How long a pooled connection may sit unused before the pool closes it (tarn checks every
 * second; tarn's own default is 30 s). A burst's extra connections go back to the server soon
 * after it, and a connection used only now and then (a worker's read of the install's settings
 * every 30 s) is not held between uses: what a process holds follows what it uses.
 */
const IDLE_CONNECTION_MS = 10_000;

/**
 * How long a new connection's handshake may take (mysql2's default is 10 s). On a loaded host a
 * burst of connects past the server's listen backlog (`back_log`) has its SYNs dropped and resent
 * after 1, 3 and 7 s, and the handshake then waits for a thread: seen here passing 10 s while the
 * server was fine. A refused connection (no server) still fails at once; only a host that does not
 * answer at all takes this long to say so.
 */
const CONNECT_TIMEOUT_MS = 20_000;

export interface ConnectOptions {
  readonly url: string;
  /** Largest number of pooled connections. */
  readonly poolMax: number;
  /** Where knex's own messages go (it would print them on the console). */
  readonly logger: Logger;
  /** MariaDB idle_transaction_timeout of every session, in ms (rounded up to seconds); 0 leaves the server's. */
  readonly idleTransactionTimeoutMs?: number;
}

/**
 * A knex instance over mysql2 with the settings every sluice query relies on: UTC session time
 * zone (all times are DATETIME(3) from NOW(3)), JSON returned as strings (parsed by us, the same
 * on MySQL and MariaDB), big ids kept exact.
 */
export function connect({ url, poolMax, logger, idleTransactionTimeoutMs = 0 }: ConnectOptions): Knex {
  const { sslMode: _mode, ...connection } = parseMysqlUrl(url);
  const session = sessionSql(idleTransactionTimeoutMs);
  return knexFactory({
    client: 'mysql2',
    connection: {
      ...connection,
      connectTimeout: CONNECT_TIMEOUT_MS,
      timezone: 'Z',
      charset: 'utf8mb4',
      jsonStrings: true,
      supportBigNumbers: true,
      bigNumberStrings: false,
      queryFormat: valuesOnly,
    } as Knex.MySql2ConnectionConfig,
    pool: {
      min: 0,
      max: poolMax,
      idleTimeoutMillis: IDLE_CONNECTION_MS,
      afterCreate(
        connection: { query(sql: string, cb: (err: Error | null) => void): void },
        done: (err: Error | null, c: unknown) => void,
      ) {
        connection.query(session, (sessionError) => {
          if (sessionError) return done(sessionError, connection);
          connection.query(SQL_ISOLATION, (isolationError) => done(isolationError, connection));
        });
      },
    },
    acquireConnectionTimeout: 30_000,
    log: {
      // A failed connection attempt also reaches the caller (as ConnectionError): debug, not a second report.
      warn: (message: unknown) =>
        (isConnectionWarning(message) ? logger.debug : logger.warn).call(
          logger,
          { component: 'knex' },
          describe(message),
        ),
      error: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
      deprecate: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
      debug: (message: unknown) => logger.debug({ component: 'knex' }, describe(message)),
    },
  });
}

/**
 * mysql2's own formatting, skipped for a statement without values: it scans the whole text for
 * placeholders even when there is nothing to put in them, and a bulk INSERT (values rendered as
 * literals, megabytes per statement) spent a seventh of its client CPU in that scan. With values,
 * the same call mysql2 makes (its defaults: objects not stringified; the connection's time zone, which mysql2 passes).
 */
function valuesOnly(sql: string, values: unknown, timeZone?: string): string {
  if (values === undefined || values === null || (Array.isArray(values) && values.length === 0)) return sql;
  return formatSql(sql, values as Parameters<typeof formatSql>[1], false, timeZone);
}

/** knex hands its log hooks strings or errors, some with a stack appended: the first line only. */
function describe(message: unknown): string {
  return (message instanceof Error ? message.message : String(message)).split('\n')[0] ?? '';
}

/** knex's "Acquire connection error: …" (and the "aborted" ones when the pool is destroyed). */
function isConnectionWarning(message: unknown): boolean {
  return String(message instanceof Error ? message.message : message).startsWith('Acquire connection error');
}
