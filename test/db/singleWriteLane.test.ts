import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { LANE_IDLE_MS } from '../../src/db/SingleWriteLane.ts';
import type { Sluice } from '../../src/index.ts';
import { countRows } from '../helpers/factory.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * A single enqueue keeps one connection of sluice's pool between writes (SingleWriteLane): these
 * hold it to the pool's rules. Overlapping writes all land; a killed connection is never lent
 * again; close() does not wait on it; a pool of one is shared with every other statement.
 */
const db = useTestDatabase('single_write_lane');

/** What a test reaches of knex's pool: a connection lent to the test itself. */
interface TestClient {
  acquireConnection(): Promise<{ threadId: number; _fatalError?: unknown; __knex__disposed?: unknown }>;
  releaseConnection(connection: unknown): Promise<void>;
}

const clientOf = (sluice: Sluice) => sluice.knex.client as unknown as TestClient;

async function connectionId(sluice: Sluice): Promise<number> {
  const [rows] = (await sluice.knex.raw('SELECT CONNECTION_ID() AS id')) as [{ id: number }[]];
  return Number(rows[0]?.id);
}

describe('the single-write lane', () => {
  it('lands every write of overlapping enqueues, each with its own id', async () => {
    const sluice = db.open({ poolMax: 3 });
    const sequential = [];
    for (let n = 0; n < 20; n++) sequential.push((await sluice.enqueue({ name: 'one', payload: { n } })).id);
    const overlapping = await Promise.all(
      Array.from({ length: 200 }, (_, n) => sluice.enqueue({ name: 'many', payload: { n } })),
    );
    const ids = [...sequential, ...overlapping.map((r) => r.id)];
    expect(new Set(ids).size).toBe(220);
    expect(await countRows(db, 'sluice_jobs')).toBe(220);
    const rows = await db.query<{ id: number }>('SELECT id FROM sluice_jobs');
    expect(new Set(rows.map((r) => Number(r.id)))).toEqual(new Set(ids));
  });

  it('never lends a killed connection again: the next enqueue succeeds on a new one', async () => {
    const sluice = db.open({ poolMax: 1 });
    await sluice.enqueue({ name: 'first' });
    // With a pool of one, the test's acquire is handed the lane's connection (the lane gives it up).
    const client = clientOf(sluice);
    const victim = await client.acquireConnection();
    await client.releaseConnection(victim);
    await sluice.enqueue({ name: 'on-the-lane' });
    const admin = await mysql.createConnection({ uri: db.url });
    try {
      await admin.query(`KILL CONNECTION ${victim.threadId}`);
    } finally {
      await admin.end();
    }
    await waitFor(() => Boolean(victim._fatalError ?? victim.__knex__disposed), {
      what: 'the client seeing its connection killed',
      intervalMs: 5,
    });
    const after = await sluice.enqueue({ name: 'after-the-kill' });
    expect(after.duplicate).toBe(false);
    expect(await connectionId(sluice)).not.toBe(victim.threadId);
    expect(await countRows(db, 'sluice_jobs')).toBe(3);
  });

  it('lets close() finish while it holds a connection, idle or mid-write', async () => {
    const idle = db.open();
    await idle.enqueue({ name: 'held' });
    const startedAt = Date.now();
    await idle.close();
    expect(Date.now() - startedAt).toBeLessThan(LANE_IDLE_MS / 2);

    const busy = db.open();
    await busy.enqueue({ name: 'held' });
    const writing = busy.enqueue({ name: 'mid-write' });
    await busy.close();
    await expect(writing).resolves.toMatchObject({ duplicate: false });
    expect(await countRows(db, 'sluice_jobs')).toBe(3);
  });

  it('does not starve a pool of one: enqueues and other statements interleave', async () => {
    const sluice = db.open({ poolMax: 1 });
    for (let n = 0; n < 20; n++) {
      await sluice.enqueue({ name: 'one', payload: { n } });
      const startedAt = Date.now();
      await sluice.knex.raw('SELECT 1');
      // Handed over at the request, not when the lane's idle check comes round.
      expect(Date.now() - startedAt).toBeLessThan(LANE_IDLE_MS / 2);
    }
    // Overlapping: enqueues that queue on the pool behind a transaction that holds its only connection.
    const enqueues: Promise<unknown>[] = [];
    await sluice.knex.transaction(async (trx) => {
      for (let n = 0; n < 10; n++) enqueues.push(sluice.enqueue({ name: 'behind', payload: { n } }));
      await trx.raw('SELECT 1');
    });
    await Promise.all([...enqueues, sluice.knex.raw('SELECT 1'), sluice.enqueue({ name: 'last' })]);
    expect(await countRows(db, 'sluice_jobs')).toBe(31);
  });
});
