import { ConnectionError, SchemaVersionError } from '../errors.ts';
import { ER } from './mysqlErrors.ts';
import { redactUrl } from './redactUrl.ts';

/** Errors of a connection attempt a user can fix (no server there, wrong host, wrong database); access denied errors too. */
const CONNECTION_FAILURES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ER_BAD_DB_ERROR',
  'ER_DBACCESS_DENIED_ERROR',
]);

/**
 * What a public call re-throws for a failure: a connection failure becomes ConnectionError and a
 * missing table SchemaVersionError, each saying how to fix it and without the password; a server
 * out of connections a ConnectionError that says so, with the connections this process holds
 * (`held`, when the caller knows); anything else is returned as it is. `url` is null when the
 * application passed its own knex (its connection failures are its own to describe).
 */
export function explainFailure(url: string | null, error: unknown, held?: number): unknown {
  const { code, errno, sqlMessage } = (error ?? {}) as { code?: string; errno?: number; sqlMessage?: string };
  if (errno === ER.CON_COUNT_ERROR) {
    const holding = held === undefined ? '' : ` This process holds ${held} connection(s) to it.`;
    return new ConnectionError(
      `the server refused a new connection: all of its max_connections are in use (ER_CON_COUNT_ERROR).${holding} ` +
        'Raise max_connections, or fit the fleet to it (docs/operating.md, Connection budget).',
      { cause: error },
    );
  }
  if (errno === ER.NO_SUCH_TABLE) {
    return new SchemaVersionError(
      `${sqlMessage}: run \`sluice migrate\` (or sluice.migrate()) against this database first`,
    );
  }
  if (url && (CONNECTION_FAILURES.has(code ?? '') || code?.startsWith('ER_ACCESS_DENIED'))) {
    return describeConnectionFailure(url, error);
  }
  return error;
}

/** Turns a failed first query into an error that says how to fix it, without the password. */
function describeConnectionFailure(url: string, error: unknown): ConnectionError {
  const reason = (error as { message?: string } | null)?.message ?? String(error);
  return new ConnectionError(
    `cannot use the database at ${redactUrl(url)}: ${reason}. ` +
      'Set MYSQL_URL=mysql://user:password@host:port/database to point sluice at a MySQL 8.0+ or MariaDB 10.6+ server.',
    { cause: error },
  );
}
