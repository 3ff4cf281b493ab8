import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { tablesFor } from '../../src/db/tables.ts';
import type { Sluice } from '../../src/index.ts';
import { completeJobs } from '../../src/worker/claims/completeJobs.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

const db = useTestDatabase('workflow_fan_in_race');
const tables = tablesFor('sluice_');
const PARENTS = 200;
const CONNECTIONS = 8;

/**
 * A fan-in's parents all finishing at the same moment: 200 parents of one child, each claimed
 * apart, completed at once through 8 pools (up to 80 connections). Each completion counts the
 * child's hold row down under its lock, so they queue on that row, and InnoDB may pick deadlock
 * victims among them; a victim's transaction is run again (retryTransient's rule), never reported
 * as a failure. Every parent completes once with no attempt counted, and the child is released
 * exactly once — by exactly one of the 200 — with history on and off.
 */
describe('200 parents of one child finishing at once', () => {
  for (const history of [true, false]) {
    it(`complete without an error and release the child exactly once (history ${history ? 'on' : 'off'})`, async () => {
      const pools: Sluice[] = Array.from({ length: CONNECTIONS }, () => db.open());
      // The race is on the hold row, not on connecting: each pool opens its connections first, a
      // pool at a time (80 handshakes at once ran past mysql2's 10 s connect timeout on a loaded host).
      for (const pool of pools)
        await Promise.all(Array.from({ length: 10 }, () => pool.knex.raw('SELECT SLEEP(0.05)')));
      for (let round = 0; round < 3; round++) {
        for (const table of ['sluice_jobs', 'sluice_job_edges', 'sluice_job_holds', 'sluice_job_history'])
          await db.query(`TRUNCATE ${table}`);
        const parents = Array.from({ length: PARENTS }, (_, i) => ({ name: 'part', ref: `p${i}`, payload: { i } }));
        await db.sluice.enqueueBatch([...parents, { name: 'fan-in', parents: parents.map((p) => p.ref) }]);
        const claimed = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE name = 'part' ORDER BY id");
        await db.query("UPDATE sluice_jobs SET lock_id = CONCAT('t.', id), locked_at = NOW(3) WHERE name = 'part'");
        const deadlocksBefore = await deadlocks();
        const outcomes = await Promise.allSettled(
          claimed.map(({ id }, i) =>
            completeJobs(fromKnex((pools[i % CONNECTIONS] as Sluice).knex), tables, `t.${id}`, [Number(id)], {
              history,
            }),
          ),
        );
        const errors = outcomes.filter((o) => o.status === 'rejected').map((o) => String(o.reason));
        expect(errors).toEqual([]);
        const released = outcomes.map((o) => (o.status === 'fulfilled' ? (o.value.get('default') ?? 0) : 0));
        expect(released.filter((n) => n > 0)).toEqual([1]);
        const [child] = await db.query<{ held: number; lock_id: string }>(
          "SELECT run_at = '9999-12-31 23:59:59.000' AS held, lock_id FROM sluice_jobs WHERE name = 'fan-in'",
        );
        expect({ held: Number(child?.held), lockId: child?.lock_id }).toEqual({ held: 0, lockId: '' });
        expect(await countRows(db, 'sluice_jobs')).toBe(1);
        expect(await countRows(db, 'sluice_job_holds')).toBe(0);
        expect(await countRows(db, 'sluice_job_edges', 'parent_outcome IS NULL')).toBe(0);
        expect(await countRows(db, 'sluice_job_edges', "parent_outcome = 'completed'")).toBe(PARENTS);
        if (history) {
          expect(await countRows(db, 'sluice_job_history', "outcome = 'completed' AND retry_times = 0")).toBe(PARENTS);
          expect(await countRows(db, 'sluice_job_history')).toBe(PARENTS);
        }
        process.stdout.write(
          `[fan-in] history ${history ? 'on' : 'off'}, round ${round + 1}: server deadlocks meanwhile ${(await deadlocks()) - deadlocksBefore}\n`,
        );
      }
      await Promise.all(pools.map((p) => p.close()));
    }, 240_000);
  }
});

/**
 * A deadlock forced on the hold row, with the completion as its victim: another transaction, made
 * heavy (InnoDB rolls back the lighter one), holds the child's hold row, lets the completion lock
 * its parent's row and queue behind it on the hold, then asks for the parent's row. That request
 * can only be granted once the server has rolled the completion back (it waits for the hold row,
 * so it cannot have committed). The completion runs again and completes: no error, no attempt
 * counted, the child released once.
 */
describe('a completion chosen as a deadlock victim on the hold row', () => {
  for (const history of [true, false]) {
    it(`runs again and releases the child once (history ${history ? 'on' : 'off'})`, async () => {
      for (const table of ['sluice_jobs', 'sluice_job_edges', 'sluice_job_holds', 'sluice_job_history'])
        await db.query(`TRUNCATE ${table}`);
      await db.query('CREATE TABLE IF NOT EXISTS test_weight (id INT AUTO_INCREMENT PRIMARY KEY, pad CHAR(100))');
      await db.sluice.enqueueBatch([
        { name: 'part', ref: 'p' },
        { name: 'fan-in', parents: ['p'] },
      ]);
      const [parent] = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE name = 'part'");
      const [child] = await db.query<{ id: number }>("SELECT id FROM sluice_jobs WHERE name = 'fan-in'");
      await db.query("UPDATE sluice_jobs SET lock_id = 't.p', locked_at = NOW(3) WHERE id = ?", [parent?.id]);
      const other = db.open();
      const completer = db.open();
      const trx = await other.knex.transaction();
      try {
        await trx.raw(`INSERT INTO test_weight (pad)
          WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000)
          SELECT 'x' FROM seq a, (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5) b`);
        await trx.raw('SELECT * FROM sluice_job_holds WHERE job_id = ? FOR UPDATE', [Number(child?.id)]);
        const completion = completeJobs(fromKnex(completer.knex), tables, 't.p', [Number(parent?.id)], { history });
        await waitForLockWait();
        // Granted only once the completion, holding the parent's row, was rolled back as the victim.
        await trx.raw('UPDATE sluice_jobs SET priority = priority WHERE id = ?', [Number(parent?.id)]);
        await trx.commit();
        const released = await completion;
        expect(released.get('default')).toBe(1);
      } finally {
        if (!trx.isCompleted()) await trx.rollback();
        await Promise.all([other.close(), completer.close()]);
      }
      expect(await countRows(db, 'sluice_jobs')).toBe(1);
      expect(await countRows(db, 'sluice_job_holds')).toBe(0);
      const [left] = await db.query<{ held: number }>(
        "SELECT run_at = '9999-12-31 23:59:59.000' AS held FROM sluice_jobs WHERE id = ?",
        [child?.id],
      );
      expect(Number(left?.held)).toBe(0);
      if (history)
        expect(await countRows(db, 'sluice_job_history', "outcome = 'completed' AND retry_times = 0")).toBe(1);
    }, 60_000);
  }
});

/** Waits until a transaction of this test's database waits for a lock on job_holds (the completion, on the hold row). */
async function waitForLockWait(): Promise<void> {
  for (let i = 0; i < 400; i++) {
    // The process list, not innodb_trx: MariaDB may leave a waiting statement out of innodb_trx's
    // snapshot for seconds at a time, while the process list shows it at once.
    const [row] = await db.query<{ n: number }>(
      `SELECT COUNT(*) AS n
       FROM information_schema.processlist p
       WHERE p.db = DATABASE() AND p.command = 'Query' AND p.info LIKE '%job_holds%' AND p.info NOT LIKE '%processlist%'`,
    );
    if (Number(row?.n) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the completion never waited for the hold row');
}

/** The server's deadlock count so far (every database's: other tests on the server add to it). */
async function deadlocks(): Promise<number> {
  const [row] = await db.query<{ Value: string }>("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'");
  return Number(row?.Value ?? 0);
}
