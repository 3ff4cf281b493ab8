import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { ConnectionError } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

const db = useTestDatabase('connection_loss');

describe('a batch whose connection is killed half-way', () => {
  it('rolls back whole and says why: a ConnectionError whose cause is the driver’s own error', async () => {
    const sluice = db.open({ maxRowsPerInsert: 500 });
    const admin = await mysql.createConnection({ uri: db.url });
    const enqueue = sluice
      .enqueueBatch(Array.from({ length: 200_000 }, (_, n) => ({ name: 'work', payload: { n, pad: 'x'.repeat(100) } })))
      .catch((e: unknown) => e);
    const victim = await waitFor(
      async () => {
        const [rows] = (await admin.query(
          "SELECT id FROM information_schema.processlist WHERE db = DATABASE() AND info LIKE 'INSERT INTO `sluice_jobs`%'",
        )) as unknown as [{ id: number }[]];
        return rows[0]?.id;
      },
      { what: 'the batch writing its jobs', intervalMs: 5 },
    );
    await admin.query(`KILL CONNECTION ${Number(victim)}`);
    await admin.end();
    const error = await enqueue;
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as Error).message).toMatch(
      /connection was lost in the middle of a transaction, which the server rolled back/,
    );
    expect((error as Error).cause).toMatchObject({ code: expect.any(String) });
    expect((error as Error).message).not.toMatch(/ROLLBACK/);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);
    expect(await countRows(db, 'sluice_batches')).toBe(0);
    // The pool replaced the killed connection: the next call works.
    expect(await sluice.enqueue({ name: 'after' })).toMatchObject({ duplicate: false });
  });
});
