import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { emptyTables, readLiveTableStats } from './emptyTables.ts';
import { insertJob } from './factory.ts';
import { useTestDatabase } from './testDatabase.ts';

// This file empties its database by hand, to watch what emptyTables leaves.
const db = useTestDatabase('empty_tables', { truncate: false });

async function count(table: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM \`${table}\``);
  return Number(row?.n);
}

describe('emptyTables (what useTestDatabase runs before each test)', () => {
  it('leaves no rows and every AUTO_INCREMENT counter back at 1, also where the rows were already deleted', async () => {
    const admin = await mysql.createConnection({ uri: db.url });
    try {
      await readLiveTableStats(admin);
      await insertJob(db);
      await insertJob(db);
      // sluice_jobs keeps its rows; sluice_batches is empty again, but its counter moved on.
      await db.query('INSERT INTO sluice_batches (size) VALUES (1), (1)');
      await db.query('DELETE FROM sluice_batches');
      await emptyTables(admin, db.name);
      expect(await count('sluice_jobs')).toBe(0);
      expect(await insertJob(db)).toBe(1);
      await db.query('INSERT INTO sluice_batches (size) VALUES (1)');
      expect(await db.query('SELECT id FROM sluice_batches')).toEqual([{ id: 1 }]);
    } finally {
      await admin.end();
    }
  });
});
