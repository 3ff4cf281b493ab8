import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchTooLargeError, type JobSpec } from '../../src/index.ts';
import {
  type ClusterDatabase,
  clusterDatabase,
  failureCounts,
  report,
  scalarOn,
  startWorker,
  stopAll,
} from '../cluster/galeraFleet.ts';
import { sharedCluster } from '../cluster/sharedCluster.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Issue 12 on a 3-node cluster: idempotency keys stay race-free across nodes without a unique
 * index on the jobs table; a batch the cluster refuses for its write-set limits is a clear error
 * and leaves nothing; a 100,000-job batch enqueued through one node while the other nodes drain
 * the same queue lands whole on every node.
 */
let db: ClusterDatabase;

beforeAll(async () => {
  db = await clusterDatabase(await sharedCluster(), 'sluice_queue');
});

afterAll(async () => {
  await db?.close();
});

const node = (index: number) => db.nodes[index] as mysql.Pool;

describe('enqueueing on a 3-node Galera cluster', () => {
  it('concurrent enqueues of one idempotency key through the three nodes make one job', async () => {
    const through = [0, 1, 2].map((i) => db.sluice(i));
    for (let k = 0; k < 20; k++) {
      const key = `order-${k}`;
      const results = await Promise.all(
        through.map((s) => s.enqueue({ name: 'effect', queue: 'keys', idempotencyKey: key })),
      );
      expect(
        results.filter((r) => !r.duplicate),
        key,
      ).toHaveLength(1);
      const id = results.find((r) => !r.duplicate)?.id;
      for (const r of results) expect(r.id, key).toBe(id);
    }
    // Whole batches too: each node's batch carries the same 200 keys.
    const jobs: JobSpec[] = Array.from({ length: 200 }, (_, n) => ({
      name: 'effect',
      queue: 'keys',
      idempotencyKey: `line-${n}`,
    }));
    const batches = await Promise.all(through.map((s) => s.enqueueBatch(jobs)));
    expect(batches.reduce((n, b) => n + b.count, 0)).toBe(200);
    expect(batches.reduce((n, b) => n + b.skipped, 0)).toBe(400);
    for (const index of [0, 1, 2]) {
      expect(await scalarOn(node(index), "SELECT COUNT(*) FROM sluice_jobs WHERE queue = 'keys'")).toBe(220);
      expect(
        await scalarOn(node(index), "SELECT COUNT(DISTINCT idempotency_key) FROM sluice_jobs WHERE queue = 'keys'"),
      ).toBe(220);
    }
  });

  it('a batch over wsrep_max_ws_rows or wsrep_max_ws_size is refused with BatchTooLargeError and leaves 0 rows on every node', async () => {
    const batchesBefore = await scalarOn(node(0), 'SELECT COUNT(*) FROM sluice_batches');
    const jobs = (queue: string, n: number, payload: object = {}) =>
      Array.from({ length: n }, (_, i) => ({ name: 'effect', queue, payload: { ...payload, i } }));
    const limits: [string, string, JobSpec[]][] = [
      ['wsrep_max_ws_rows', '1000', jobs('ws-rows', 3_000)],
      ['wsrep_max_ws_size', '262144', jobs('ws-size', 3_000, { pad: 'x'.repeat(200) })],
    ];
    for (const [variable, value, batch] of limits) {
      await node(0).query(`SET GLOBAL ${variable} = ${value}`);
      try {
        const error = await db
          .sluice(0)
          .enqueueBatch(batch)
          .then(
            () => new Error('the batch was accepted'),
            (e: unknown) => e,
          );
        report(`${variable} = ${value}: ${(error as Error).message}`);
        expect(error).toBeInstanceOf(BatchTooLargeError);
        expect(error).toMatchObject({ code: 'SLUICE_BATCH_TOO_LARGE' });
        expect((error as Error).message).toContain(`over ${variable}`);
      } finally {
        await node(0).query(`SET GLOBAL ${variable} = DEFAULT`);
      }
      const queue = batch[0]?.queue as string;
      for (const index of [0, 1, 2])
        expect(await scalarOn(node(index), 'SELECT COUNT(*) FROM sluice_jobs WHERE queue = ?', [queue])).toBe(0);
    }
    for (const index of [0, 1, 2])
      expect(await scalarOn(node(index), 'SELECT COUNT(*) FROM sluice_batches')).toBe(batchesBefore);
    // The same batch goes through once the limit is back to its default.
    expect((await db.sluice(0).enqueueBatch(limits[0]?.[2] as JobSpec[])).count).toBe(3_000);
  });

  it('a 100,000-job batch enqueued through node 1 while nodes 2 and 3 drain the same queue lands whole on every node', async () => {
    const early = await db
      .sluice(1)
      .enqueueBatch(Array.from({ length: 4_000 }, (_, n) => ({ name: 'effect', queue: 'big', payload: { b: 9, n } })));
    const workers = [
      startWorker(db, { node: 1, queues: 'big', claim: 'random-head' }),
      startWorker(db, { node: 2, queues: 'big', claim: 'skip-locked' }),
    ];
    try {
      await Promise.all(workers.map((w) => w.ready));
      await waitFor(
        async () => (await scalarOn(node(0), 'SELECT COUNT(*) FROM galera_effects WHERE batch = 9')) > 200,
        {
          what: 'nodes 2 and 3 draining the queue',
        },
      );
      const started = performance.now();
      const big = await db
        .sluice(0)
        .enqueueBatch(
          Array.from({ length: 100_000 }, (_, n) => ({ name: 'effect', queue: 'big', payload: { b: 10, n } })),
        );
      const seconds = (performance.now() - started) / 1000;
      const drained = await scalarOn(node(0), 'SELECT COUNT(*) FROM galera_effects WHERE batch = 9');
      report(
        `100,000-job batch through node 1 in ${seconds.toFixed(1)} s while nodes 2 and 3 drained (${drained} of 4,000 done by then)`,
      );
      expect(big.count).toBe(100_000);
      for (const index of [0, 1, 2]) {
        // One statement, one snapshot: what is live plus what workers already finished.
        const landed = await scalarOn(
          node(index),
          `SELECT (SELECT COUNT(*) FROM sluice_jobs WHERE batch_id = ?) + (SELECT COUNT(*) FROM sluice_job_history WHERE batch_id = ?)`,
          [big.batchId, big.batchId],
        );
        expect(landed, `node ${index + 1}`).toBe(100_000);
        expect(await scalarOn(node(index), 'SELECT size FROM sluice_batches WHERE id = ?', [big.batchId])).toBe(
          100_000,
        );
        expect(
          await scalarOn(
            node(index),
            "SELECT COUNT(*) FROM sluice_jobs WHERE queue = 'big' AND (batch_id IS NULL OR batch_id NOT IN (?, ?))",
            [early.batchId, big.batchId],
          ),
        ).toBe(0);
      }
      expect(failureCounts(workers)).toMatchObject({ failed: 0, retried: 0, conflicted: 0, dead: 0 });
    } finally {
      await stopAll(workers);
    }
  });
});
