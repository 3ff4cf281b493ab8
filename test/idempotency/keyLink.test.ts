import { describe, expect, it } from 'vitest';
import { fromKnex } from '../../src/db/executor.ts';
import { chunkLimitsFor } from '../../src/db/planChunks.ts';
import { linkIdempotencyKeys, reserveIdempotencyKeys } from '../../src/idempotency/reserveIdempotencyKeys.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';

/**
 * The link from each key an enqueue won to its job reads the jobs by primary key, from the first
 * id its INSERTs reported (the jobs table has no index on the key: every job would pay for one).
 * Jobs of other enqueues land in that range too; they must neither be linked nor waited for.
 */
const db = useTestDatabase('key_link');

const insertJob = (key: string) =>
  `INSERT INTO sluice_jobs (queue, name, payload, run_at, idempotency_key) VALUES ('default', 'work', '{}', NOW(3), '${key}')`;

async function linkedJobs(): Promise<Record<string, number | null>> {
  const rows = await db.query<{ idempotency_key: string; job_id: number | null }>(
    'SELECT idempotency_key, job_id FROM sluice_idempotency_keys ORDER BY idempotency_key',
  );
  return Object.fromEntries(rows.map((r) => [r.idempotency_key, r.job_id === null ? null : Number(r.job_id)]));
}

describe('linking won keys to their jobs', () => {
  it('links only its own keys, and does not wait for another enqueue’s uncommitted jobs in its range', async () => {
    const knex = db.sluice.knex;
    const limits = chunkLimitsFor(16 * 1024 * 1024, 1_000);
    const ours = await knex.transaction();
    const theirs = await knex.transaction();
    try {
      // A locking read would wait on `theirs` for this long, then fail: the plain read does not wait.
      await ours.raw('SET SESSION innodb_lock_wait_timeout = 2');
      const tx = fromKnex(ours, { foreign: true });
      const keys = ['a-1', 'a-2'].map((idempotencyKey) => ({ queue: 'default', idempotencyKey }));
      const reservation = await reserveIdempotencyKeys(tx, db.sluice.tables, keys, limits);
      const { insertId: first } = await tx.write(insertJob('a-1'));
      // Another enqueue commits a keyed job between our two INSERTs; a third is still open.
      const committed = await db.sluice.enqueue({ name: 'work', idempotencyKey: 'b-1' });
      const { insertId: second } = await tx.write(insertJob('a-2'));
      const { insertId: open } = await fromKnex(theirs, { foreign: true }).write(insertJob('c-1'));
      expect(committed.id).toBeGreaterThan(first);
      expect(open).toBeGreaterThan(second);

      await linkIdempotencyKeys(tx, db.sluice.tables, reservation, first, limits);
      await ours.commit();
      expect(await linkedJobs()).toEqual({ 'a-1': first, 'a-2': second, 'b-1': committed.id });
    } finally {
      if (!ours.isCompleted()) await ours.rollback();
      await theirs.rollback();
    }
  });
});
