import { describe, expect, it } from 'vitest';
import { ClaimLostError } from '../../src/errors.ts';
import { defineJob } from '../../src/index.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { countRows, jobRow, operationsOf } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { withWorker } from '../helpers/workerHarness.ts';

/**
 * A completion of every job one claim took finds the claim's rows by (queue, lock_id) — one
 * ix_head range — instead of by a list of ids (issue 17: the list cost the server ~3 µs per job
 * per statement). It must touch exactly the rows the id list would: the claim's rows still held,
 * never another claim's, and a claim of which one job was lost still fails whole (history on).
 */
const db = useTestDatabase('whole_claim');

async function claim(tokens: ClaimTokens, want: number): Promise<{ lockId: string; ids: number[] }> {
  const { exec, tables } = operationsOf(db);
  const lockId = tokens.next();
  const rows = await claimRandomHead(exec, tables, { queue: 'default', priorities: [0], want, lockId, headSize: 50 });
  return { lockId, ids: rows.map((r) => Number(r.id)) };
}

describe('whole-claim completion', () => {
  it("completes exactly the claim's rows, copies them to the history, and leaves another claim's alone", async () => {
    const { exec, tables } = operationsOf(db);
    await db.sluice.enqueueBatch(Array.from({ length: 8 }, (_, i) => ({ name: 'w', payload: { i } })));
    const tokens = new ClaimTokens();
    const mine = await claim(tokens, 5);
    const theirs = await claim(tokens, 3);
    expect(mine.ids).toHaveLength(5);
    expect(theirs.ids).toHaveLength(3);

    await completeJobs(exec, tables, mine.lockId, mine.ids, { history: true, wholeClaimOf: 'default' });

    expect(await countRows(db, 'sluice_jobs')).toBe(3);
    for (const id of theirs.ids) expect(await jobRow(db, id)).toMatchObject({ lock_id: theirs.lockId });
    const history = await db.query<{ job_id: number; outcome: string }>(
      'SELECT job_id, outcome FROM sluice_job_history ORDER BY job_id',
    );
    expect(history).toEqual([...mine.ids].sort((a, b) => a - b).map((id) => ({ job_id: id, outcome: 'completed' })));
  });

  it('one row of the claim taken by another claim: ClaimLostError and nothing written (history on)', async () => {
    const { exec, tables } = operationsOf(db);
    await db.sluice.enqueueBatch(Array.from({ length: 4 }, (_, i) => ({ name: 'w', payload: { i } })));
    const mine = await claim(new ClaimTokens(), 4);
    const [taken] = mine.ids as [number];
    await db.query("UPDATE sluice_jobs SET lock_id = 'someone-else' WHERE id = ?", [taken]);

    const error = await completeJobs(exec, tables, mine.lockId, mine.ids, {
      history: true,
      wholeClaimOf: 'default',
    }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ClaimLostError);
    expect(error).toMatchObject({ lost: 1 });
    expect(await countRows(db, 'sluice_jobs')).toBe(4);
    expect(await countRows(db, 'sluice_job_history')).toBe(0);
    expect(await jobRow(db, taken)).toMatchObject({ lock_id: 'someone-else' });
  });

  it('a worker uses the lock_id range when the whole claim succeeded, the id list when one job of it failed', async () => {
    const deletes: string[] = [];
    db.sluice.knex.on('query', (q: { sql: string }) => {
      if (/^\s*DELETE FROM `sluice_jobs`/.test(q.sql))
        deletes.push(/queue = \?\s+AND lock_id = \?/.test(q.sql) ? 'range' : 'ids');
    });
    const flaky = defineJob<{ fail: boolean }>({
      name: 'flaky',
      backoff: { type: 'fixed', delayMs: 3_600_000 },
      handle(payload) {
        if (payload.fail) throw new Error('this one fails');
      },
    });
    const run = async (failing: number) => {
      deletes.length = 0;
      const jobs = Array.from({ length: 20 }, (_, i) => ({ name: 'flaky', payload: { fail: i === failing } }));
      await db.sluice.enqueueBatch(jobs);
      await withWorker(db.sluice, [flaky], { concurrency: 20 }, async () => {
        const done = failing < 0 ? 20 : 19;
        await waitFor(async () => (await countRows(db, 'sluice_job_history')) === done, { timeoutMs: 10_000 });
      });
    };

    await run(-1);
    expect(deletes).toEqual(['range']);
    expect(await countRows(db, 'sluice_jobs')).toBe(0);

    await db.query('TRUNCATE TABLE sluice_job_history');
    await run(7);
    expect(deletes).toEqual(['ids']);
    const [left] = await db.query<{ retry_times: number; lock_id: string }>(
      'SELECT retry_times, lock_id FROM sluice_jobs',
    );
    expect(await countRows(db, 'sluice_jobs')).toBe(1);
    expect(left).toMatchObject({ retry_times: 1, lock_id: '' });
  });
});
