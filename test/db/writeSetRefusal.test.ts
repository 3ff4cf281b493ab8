import { describe, expect, it } from 'vitest';
import { writeSetRefusal } from '../../src/db/mysqlErrors.ts';
import { BatchTooLargeError } from '../../src/index.ts';

/**
 * The errors a Galera node returns when a transaction is over its write-set limits, as measured
 * on MariaDB 10.11 + galera-4 (the end-to-end case, with a real cluster refusing a batch and
 * leaving 0 rows, is in test/galera/galeraQueue.test.ts).
 */
function serverError(errno: number, sqlMessage: string) {
  return Object.assign(new Error(sqlMessage), { errno, sqlMessage, code: 'X' });
}

describe('writeSetRefusal', () => {
  it('turns wsrep_max_ws_rows (1180) and wsrep_max_ws_size (1105) refusals into BatchTooLargeError, keeping the cause', () => {
    const rows = serverError(1180, 'wsrep_max_ws_rows exceeded');
    const size = serverError(1105, 'Maximum writeset size exceeded');
    for (const [cause, limit] of [
      [rows, 'wsrep_max_ws_rows'],
      [size, 'wsrep_max_ws_size'],
    ] as const) {
      const error = writeSetRefusal(cause);
      expect(error).toBeInstanceOf(BatchTooLargeError);
      expect(error).toMatchObject({ code: 'SLUICE_BATCH_TOO_LARGE', cause });
      expect(error?.message).toContain(`over ${limit}`);
      expect(error?.message).toContain('nothing of it was written');
    }
  });

  it('leaves every other error alone', () => {
    expect(writeSetRefusal(serverError(1180, 'Got error 6 during COMMIT'))).toBeNull();
    expect(writeSetRefusal(serverError(1105, 'Unknown error'))).toBeNull();
    expect(writeSetRefusal(serverError(1213, 'Deadlock found'))).toBeNull();
    expect(writeSetRefusal(new Error('plain'))).toBeNull();
    expect(writeSetRefusal(undefined)).toBeNull();
  });
});
