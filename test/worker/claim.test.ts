import { describe, expect, it } from 'vitest';
import { type Executor, fromKnex } from '../../src/db/executor.ts';
import type { JobRow } from '../../src/model/job.ts';
import { ClaimTokens } from '../../src/worker/ClaimTokens.ts';
import { claimRandomHead } from '../../src/worker/claims/claimRandomHead.ts';
import { claimSkipLocked } from '../../src/worker/claims/claimSkipLocked.ts';
import { QueuePriorities } from '../../src/worker/QueuePriorities.ts';
import { ago, countRows, fromNow, insertJob, MINUTE, SECOND } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('claim');

type Strategy = 'random-head' | 'skip-locked';

interface ClaimCall {
  queue?: string;
  want: number;
  lockId: string;
  headSize?: number;
}

/** One claim statement of the given strategy, as the Worker issues it (with a freshly read priority set). */
async function claim(strategy: Strategy, exec: Executor, call: ClaimCall): Promise<JobRow[]> {
  const queue = call.queue ?? 'default';
  const { tables } = db.sluice;
  const priorities = await new QueuePriorities(exec, tables, 0).refresh(queue);
  return strategy === 'skip-locked'
    ? claimSkipLocked(exec, tables, { queue, priorities, want: call.want, lockId: call.lockId })
    : claimRandomHead(exec, tables, {
        queue,
        priorities,
        want: call.want,
        lockId: call.lockId,
        headSize: call.headSize ?? 100,
      });
}

const strategies: Strategy[] = ['random-head', 'skip-locked'];

describe.each(strategies)('claim (%s)', (strategy) => {
  it('8 concurrent claimers never claim a job twice, and together claim all 2,000', async () => {
    const sluice = db.open({ poolMax: 12 });
    const exec = fromKnex(sluice.knex);
    await sluice.enqueueBatch(Array.from({ length: 2_000 }, (_, n) => ({ name: 'work', payload: { n } })));
    const claimedBy = new Map<number, string[]>();
    const rounds: number[] = [];

    const claimer = async (): Promise<void> => {
      const tokens = new ClaimTokens();
      let round = 0;
      for (;;) {
        round++;
        const lockId = tokens.next();
        const rows = await claim(strategy, exec, { want: 7, lockId, headSize: 50 });
        for (const row of rows) {
          expect(row.lock_id).toBe(lockId);
          const id = Number(row.id);
          claimedBy.set(id, [...(claimedBy.get(id) ?? []), lockId]);
        }
        if (rows.length === 0 && (await countRows(db, 'sluice_jobs', "lock_id = ''")) === 0) break;
        if (round > 5_000) throw new Error('claimer made no progress');
      }
      rounds.push(round);
    };
    await Promise.all(Array.from({ length: 8 }, claimer));

    const twice = [...claimedBy].filter(([, locks]) => locks.length > 1);
    expect(twice).toEqual([]);
    expect(claimedBy.size).toBe(2_000);
    // The database agrees with what each claimer was told it won.
    const stored = await db.query<{ id: number; lock_id: string }>('SELECT id, lock_id FROM sluice_jobs');
    expect(stored).toHaveLength(2_000);
    for (const { id, lock_id } of stored) expect([lock_id]).toEqual(claimedBy.get(Number(id)));
    expect(rounds).toHaveLength(8);
  });

  it('does not claim jobs whose run_at is in the future', async () => {
    const exec = fromKnex(db.sluice.knex);
    const due = [await insertJob(db, { runAt: ago(SECOND) }), await insertJob(db, { runAt: ago(MINUTE), priority: 5 })];
    await insertJob(db, { runAt: fromNow(MINUTE), priority: -100 });
    await insertJob(db, { runAt: fromNow(30 * SECOND) });
    const rows = await claim(strategy, exec, { want: 10, lockId: 'w-1~a.1' });
    expect(rows.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual(due);
    expect(await claim(strategy, exec, { want: 10, lockId: 'w-1~a.2' })).toEqual([]);
    expect(await countRows(db, 'sluice_jobs', "lock_id = ''")).toBe(2);
  });

  it('claims only from its queue and never takes a claimed job', async () => {
    const exec = fromKnex(db.sluice.knex);
    const mine = await insertJob(db, { queue: 'mail' });
    await insertJob(db, { queue: 'default' });
    await insertJob(db, { queue: 'mail', lockId: 'someone-else~x.1', lockedAt: ago(SECOND) });
    const rows = await claim(strategy, exec, { queue: 'mail', want: 10, lockId: 'w-1~b.1' });
    expect(rows.map((r) => Number(r.id))).toEqual([mine]);
  });

  it('claims lower priority first, then older run_at, then lower id', async () => {
    const exec = fromKnex(db.sluice.knex);
    const a = await insertJob(db, { priority: 0, runAt: ago(10 * SECOND) });
    const b = await insertJob(db, { priority: 0, runAt: ago(20 * SECOND) });
    const c = await insertJob(db, { priority: -1, runAt: ago(1 * SECOND) });
    // Two jobs with the very same run_at: FIFO by id.
    const [{ t }] = (await db.query<{ t: string }>(
      "SELECT DATE_FORMAT(NOW(3) - INTERVAL 30 SECOND, '%Y-%m-%d %H:%i:%s.%f') AS t",
    )) as [{ t: string }];
    const d = await insertJob(db, { priority: 0, runAt: { sql: `'${t}'` } });
    const e = await insertJob(db, { priority: 0, runAt: { sql: `'${t}'` } });
    const f = await insertJob(db, { priority: 1, runAt: ago(60 * SECOND) });

    const order: number[] = [];
    for (let i = 0; i < 7; i++) {
      // headSize 1: the random pick has a single candidate, so random-head shows the head order too.
      const rows = await claim(strategy, exec, { want: 1, lockId: `w-1~c.${i}`, headSize: 1 });
      order.push(...rows.map((r) => Number(r.id)));
    }
    expect(order).toEqual([c, d, e, b, a, f]);
  });

  it('a claim of n takes exactly the n jobs at the head when the head holds n', async () => {
    const exec = fromKnex(db.sluice.knex);
    const urgent = [
      await insertJob(db, { priority: -5 }),
      await insertJob(db, { priority: -4 }),
      await insertJob(db, { priority: -3 }),
    ];
    for (let i = 0; i < 20; i++) await insertJob(db, { priority: 10 });
    const rows = await claim(strategy, exec, { want: 3, lockId: 'w-1~d.1', headSize: 3 });
    expect(rows.map((r) => Number(r.id)).sort((x, y) => x - y)).toEqual(urgent);
  });
});

describe('the head query', () => {
  it.each(strategies)(
    '(%s) uses ix_head without a filesort, with a backlog of delayed jobs in the table',
    async (strategy) => {
      const queues = ['default', 'mail', 'reports'];
      for (const queue of queues) {
        await db.sluice.enqueueBatch(
          Array.from({ length: 6_000 }, (_, n) => ({
            name: 'work',
            queue,
            priority: n % 3,
            ...(n % 2 === 0 ? { delayMs: 3_600_000 } : {}),
          })),
        );
      }
      await db.query("UPDATE sluice_jobs SET lock_id = 'busy~x.1', locked_at = NOW(3) WHERE id % 10 = 0");
      await db.query('ANALYZE TABLE sluice_jobs');

      // Capture the statement exactly as the claim sends it, so this test cannot drift from the code.
      const sluice = db.open();
      const sent: { sql: string; bindings: unknown[] }[] = [];
      sluice.knex.on('query', (q: { sql: string; bindings?: unknown[] }) =>
        sent.push({ sql: q.sql, bindings: q.bindings ?? [] }),
      );
      const rows = await claim(strategy, fromKnex(sluice.knex), { want: 5, lockId: 'w-1~e.1', headSize: 100 });
      expect(rows).toHaveLength(5);
      const head = sent.find((q) => /^\s*SELECT[\s\S]*ORDER BY priority, run_at, id/.test(q.sql));
      expect(head, 'the head SELECT was issued').toBeDefined();

      const plan = await db.query<{ key: string | null; Extra: string | null; type: string }>(
        `EXPLAIN ${head?.sql}`,
        head?.bindings,
      );
      // skip-locked reads the rows with their payloads stored apart: one primary-key probe each.
      expect(plan).toHaveLength(strategy === 'skip-locked' ? 2 : 1);
      if (plan[1]) expect([plan[1].type, plan[1].key]).toEqual(['eq_ref', 'PRIMARY']);
      expect(plan[0]?.key).toBe('ix_head');
      expect(plan[0]?.Extra ?? '').not.toContain('Using filesort');
      expect(plan[0]?.Extra ?? '').not.toContain('Using temporary');
    },
  );

  it.each(strategies)(
    '(%s) reads a bounded number of index entries however many delayed jobs wait',
    async (strategy) => {
      // 30,000 delayed jobs over three priorities, the better ones ahead of the 10 due jobs: an
      // ORDER BY priority, run_at scan without the priority set would walk every one of them.
      await db.sluice.enqueueBatch(
        Array.from({ length: 30_000 }, (_, n) => ({ name: 'work', priority: n % 3, delayMs: 3_600_000 })),
      );
      await db.sluice.enqueueBatch(Array.from({ length: 10 }, () => ({ name: 'work', priority: 2 })));
      const rows = await db.sluice.knex.transaction(async (trx) => {
        await trx.raw('FLUSH STATUS');
        const claimed = await claim(strategy, fromKnex(trx), { want: 50, lockId: 'w-1~f.1', headSize: 100 });
        const [status] = (await trx.raw("SHOW SESSION STATUS LIKE 'Handler_read_next'")) as [{ Value: string }[]];
        return { claimed, readNext: Number(status[0]?.Value) };
      });
      expect(rows.claimed).toHaveLength(10);
      expect(rows.readNext).toBeLessThan(200);
    },
  );
});
