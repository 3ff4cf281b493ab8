import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('workflow_concurrent_release');
const tables = tablesFor('sluice_');

/**
 * Two parents of one child complete at the same moment, each through its own claim, connection and
 * transaction (history on and off). Each counts the child's hold down under the hold row's lock:
 * exactly one of them sees 0 and releases it, once — never both (the count is unsigned: a second
 * decrement past 0 would fail its completion), never neither (the child would stay held).
 */
describe('two parents finishing at once', () => {
  for (const history of [true, false]) {
    it(`release their child exactly once (history ${history ? 'on' : 'off'}), 30 times over`, async () => {
      const sluice = db.open();
      for (let round = 0; round < 30; round++) {
        await db.query('TRUNCATE sluice_jobs');
        await db.query('TRUNCATE sluice_job_edges');
        await db.query('TRUNCATE sluice_job_holds');
        await db.sluice.enqueueBatch([
          { name: 'left', ref: 'l' },
          { name: 'right', ref: 'r' },
          { name: 'child', parents: ['l', 'r'] },
        ]);
        const claims = await db.query<{ id: number; name: string }>(
          "SELECT id, name FROM sluice_jobs WHERE name IN ('left', 'right') ORDER BY id",
        );
        for (const c of claims)
          await db.query('UPDATE sluice_jobs SET lock_id = ?, locked_at = NOW(3) WHERE id = ?', [`t.${c.name}`, c.id]);
        const released = await Promise.all(
          claims.map((c) => completeJobs(fromKnex(sluice.knex), tables, `t.${c.name}`, [Number(c.id)], { history })),
        );
        expect(released.map((q) => q.get('default') ?? 0).sort()).toEqual([0, 1]);
        const [child] = await db.query<{ held: number }>(
          "SELECT run_at = '9999-12-31 23:59:59.000' AS held FROM sluice_jobs WHERE name = 'child'",
        );
        expect(Number(child?.held)).toBe(0);
        expect(await countRows(db, 'sluice_job_holds')).toBe(0);
        expect(await countRows(db, 'sluice_job_edges', 'parent_outcome IS NULL')).toBe(0);
      }
    }, 120_000);
  }
});
