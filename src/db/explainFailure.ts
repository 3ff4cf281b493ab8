import { SchemaVersionError } from '../errors.ts';
import { describeConnectionFailure } from './connect.ts';
import { ER } from './mysqlErrors.ts';

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
 * missing table SchemaVersionError, each saying how to fix it and without the password; anything
 * else is returned as it is. `url` is null when the application passed its own knex (its
 * connection failures are its own to describe).
 */
export function explainFailure(url: string | null, error: unknown): unknown {
  const { code, errno, sqlMessage } = error as { code?: string; errno?: number; sqlMessage?: string };
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
