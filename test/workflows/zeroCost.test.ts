import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('workflow_zero_cost');
const tables = tablesFor('sluice_');

/**
 * Jobs outside any workflow: their claim and their completion send exactly the statements they
 * did before workflows (none reads job_edges or job_holds, no extra read of flags), while a claim
 * holding a workflow's job takes the longer path for that job only.
 */
describe('jobs outside any workflow', () => {
  for (const history of [false, true]) {
    it(`are claimed and completed with no workflow statement (history ${history ? 'on' : 'off'})`, async () => {
      await db.sluice.enqueueBatch(Array.from({ length: 20 }, (_, i) => ({ name: 'plain', payload: { i } })));
      const sluice = db.open();
      const exec = fromKnex(sluice.knex);
      const statements: string[] = [];
      sluice.knex.on('query', (q: { sql: string }) => statements.push(q.sql));
      const lockId = new ClaimTokens().next();
      const rows = await claimRandomHead(exec, tables, {
        queue: 'default',
        priorities: [0],
        want: 20,
        lockId,
        headSize: 50,
      });
      const claimed = statements.length;
      await completeJobs(
        exec,
        tables,
        lockId,
        rows.map((r) => Number(r.id)),
        { history, wholeClaimOf: 'default' },
      );
      const completion = statements
        .slice(claimed)
        .filter((s) => !/^(BEGIN|COMMIT|START TRANSACTION|SET TRANSACTION)/i.test(s.trim()));
      expect(claimed).toBe(3); // head, claim, load
      expect(completion).toHaveLength(history ? 2 : 1); // (copy to history,) delete
      expect(statements.join('\n')).not.toMatch(/job_edges|job_holds|flags <> 0/);
    });
  }

  it('a claim mixing a workflow job with plain ones sends the workflow path for that job only', async () => {
    await db.sluice.enqueueBatch([{ name: 'plain' }, { name: 'parent', ref: 'p' }, { name: 'child', parents: ['p'] }]);
    const exec = fromKnex(db.sluice.knex);
    const lockId = new ClaimTokens().next();
    const rows = await claimRandomHead(exec, tables, {
      queue: 'default',
      priorities: [0],
      want: 5,
      lockId,
      headSize: 50,
    });
    expect(rows.map((r) => r.name).sort()).toEqual(['parent', 'plain']);
    const released = await completeJobs(
      exec,
      tables,
      lockId,
      rows.map((r) => Number(r.id)),
      {
        history: true,
        wholeClaimOf: 'default',
      },
    );
    expect([...released]).toEqual([['default', 1]]);
    const [child] = await db.query<{ held: number }>(
      "SELECT run_at = '9999-12-31 23:59:59.000' AS held FROM sluice_jobs WHERE name = 'child'",
    );
    expect(Number(child?.held)).toBe(0);
    const history = await db.query<{ name: string }>('SELECT name FROM sluice_job_history ORDER BY name');
    expect(history.map((h) => h.name)).toEqual(['parent', 'plain']);
  });
});
