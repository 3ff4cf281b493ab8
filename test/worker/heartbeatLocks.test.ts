import { describe, expect, it } from 'vitest';
import { defineJob } from '../../src/index.ts';
import { useTestDatabase } from '../helpers/testDatabase.ts';
import { waitFor } from '../helpers/waitFor.ts';
import { aborted } from '../helpers/workerHarness.ts';

/**
 * A worker's liveness must not wait on a lock: the maintenance process declares a worker dead
 * when its registry row stands still for a few heartbeat intervals, and releases its claims. A
 * claim's extension is an UPDATE of the job's row; another session holding that row (on Galera, a
 * commit of the worker's own that flow control holds back) used to hold the whole beat for the
 * server's lock wait timeout (50 s by default): the registry row stood still, and a live worker
 * was declared dead.
 */
const db = useTestDatabase('heartbeat_locks');

async function beats(id: string): Promise<number> {
  const [row] = await db.query<{ beats: number | string }>('SELECT beats FROM sluice_workers WHERE id = ?', [id]);
  return Number(row?.beats ?? -1);
}

describe('a heartbeat blocked by a row lock', () => {
  it('keeps the registry row beating while another session holds a running job’s row', async () => {
    const sluice = db.open();
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => (openGate = resolve));
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const hold = defineJob({
      name: 'hold',
      handle: (_p, ctx) => {
        started();
        return Promise.race([gate, aborted(ctx.signal)]);
      },
    });
    const worker = sluice.worker({
      queues: ['hb'],
      concurrency: 1,
      jobs: [hold],
      heartbeatIntervalMs: 100,
      lockTimeoutMs: 30_000,
      pollIntervalMs: 20,
    });
    const { id } = await sluice.enqueue({ name: 'hold', queue: 'hb' });
    await worker.start();
    const holder = db.open({ poolMax: 1 });
    const trx = await holder.knex.transaction();
    try {
      await running;
      await trx.raw('SELECT id FROM sluice_jobs WHERE id = ? FOR UPDATE', [id]);
      // The beat in progress may be the one that meets the lock: count from the next one.
      const before = await beats(worker.id);
      // Ten intervals with the row held: the row beats through them (it stood still before).
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const after = await beats(worker.id);
      expect(after - before).toBeGreaterThanOrEqual(3);
      await trx.rollback();
      openGate();
      await waitFor(async () => (await db.query('SELECT 1 FROM sluice_jobs WHERE id = ?', [id])).length === 0);
    } finally {
      await trx.rollback().catch(() => undefined);
      openGate();
      await worker.stop();
    }
  });
});
