import { describe, expect, it } from 'vitest';
import { idSet } from '../../src/db/idSet.ts';
import { insertJobs } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('id_set');

describe('idSet', () => {
  it('writes runs as BETWEEN and the rest as one IN list, whatever the order and repeats', () => {
    expect(idSet('id', [7])).toEqual({ sql: 'id IN (?)', params: [[7]] });
    expect(idSet('id', [3, 1, 2])).toEqual({ sql: 'id BETWEEN ? AND ?', params: [1, 3] });
    expect(idSet('j.id', [10, 4, 5, 6, 12, 11, 20, 5])).toEqual({
      sql: '(j.id BETWEEN ? AND ? OR j.id BETWEEN ? AND ? OR j.id IN (?))',
      params: [4, 6, 10, 12, [20]],
    });
    expect(() => idSet('id', [])).toThrow(/at least one id/);
  });

  it('selects on the server exactly the rows IN (ids) selects, for random subsets of a table with gaps', async () => {
    const ids = await insertJobs(db, 80);
    await db.query('DELETE FROM sluice_jobs WHERE id % 7 = 0');
    for (let round = 0; round < 40; round++) {
      const subset = ids.filter(() => Math.random() < (round % 4) / 4 + 0.2);
      if (subset.length === 0) continue;
      const set = idSet('id', subset);
      const viaSet = await db.query<{ id: number }>(
        `SELECT id FROM sluice_jobs WHERE ${set.sql} ORDER BY id`,
        set.params,
      );
      const viaIn = await db.query<{ id: number }>('SELECT id FROM sluice_jobs WHERE id IN (?) ORDER BY id', [subset]);
      expect(viaSet).toEqual(viaIn);
    }
  });
});
