import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GaleraCluster, startCluster } from '../cluster/galeraCluster.ts';
import {
  type ClusterDatabase,
  clusterDatabase,
  failureCounts,
  linesOf,
  report,
  scalarOn,
  startMaintenance,
  startWorker,
  stopAll,
  waitDrained,
} from '../cluster/galeraFleet.ts';
import { claimsReleased, taskCount } from '../helpers/maintenanceLog.ts';

/**
 * Issue 12, "node clocks are three clocks": node 3 runs with its wall clock SKEW ahead (Debian's
 * libfaketime; NOW(3) on it moves, its monotonic clock does not) and its maintenance process
 * leads. Workers on every node run at-least-once jobs of a second each, recording every run.
 * Liveness is judged only by what changed between the leader's own observations, so no live
 * worker is declared dead, no claim is taken back, no job runs twice, and leadership never flaps.
 * (Before: heartbeat_at and locked_at written on nodes 1 and 2 looked SKEW old to node 3's NOW(3):
 * their workers were declared dead and their running jobs released and run again.)
 * Timings are tight so that a skew far smaller than a real one breaks the old rule: heartbeats
 * every second, dead after 2.5 missed, lock timeout and lease 10 s.
 */
const SKEW = '+20s';
const JOBS = 450;

let cluster: GaleraCluster;
let db: ClusterDatabase;

beforeAll(async () => {
  cluster = await startCluster({ onProgress: (line) => console.log(line) });
  await cluster.kill(2);
  await cluster.restart(2, { clockOffset: SKEW });
  db = await clusterDatabase(cluster, 'sluice_skew');
});

afterAll(async () => {
  await db?.close();
  await cluster?.clean();
});

const pool = (index: number) => db.nodes[index] as mysql.Pool;

describe(`one node's clock ${SKEW} ahead`, () => {
  it('no live worker is declared dead, no claim taken back, no job run twice, no leadership lost', async () => {
    const skewS =
      (await scalarOn(pool(2), 'SELECT UNIX_TIMESTAMP(NOW(3))')) -
      (await scalarOn(pool(0), 'SELECT UNIX_TIMESTAMP(NOW(3))'));
    report(`node 3's NOW(3) is ${skewS.toFixed(1)} s ahead of node 1's`);
    expect(skewS).toBeGreaterThan(15);

    const timings = { leaseMs: 10_000, lockTimeoutMs: 10_000, missedHeartbeats: 2.5, schedule: '* * * * * *' };
    const leader = startMaintenance(db, { node: 2, ...timings });
    await leader.waitForLine((l) => l.event === 'leader:acquired', 30_000, 'node 3 leading');
    const workerTimings = { heartbeatIntervalMs: 1_000, lockTimeoutMs: 10_000, concurrency: 10 };
    const processes = [
      leader,
      startMaintenance(db, { node: 0, ...timings }),
      startMaintenance(db, { node: 1, ...timings }),
      startWorker(db, { node: 0, queues: 'skew', claim: 'random-head', ...workerTimings }),
      startWorker(db, { node: 1, queues: 'skew', claim: 'skip-locked', ...workerTimings }),
      startWorker(db, { node: 2, queues: 'skew', claim: 'random-head', ...workerTimings }),
    ];
    try {
      await Promise.all(processes.map((p) => p.ready));
      const { batchId } = await db
        .sluice(0)
        .enqueueBatch(
          Array.from({ length: JOBS }, (_, n) => ({ name: 'run', queue: 'skew', payload: { ms: 1_000, n } })),
        );
      await waitDrained(db, 'skew', { timeoutMs: 180_000 });

      const [rows] = (await pool(0).query(
        `SELECT h.job_id, COUNT(r.id) AS runs
         FROM sluice_job_history h LEFT JOIN galera_runs r ON r.job_id = h.job_id
         WHERE h.batch_id = ? GROUP BY h.job_id`,
        [batchId],
      )) as unknown as [{ job_id: number; runs: number }[]];
      const runs = rows.map((r) => Number(r.runs));
      const passes = linesOf(processes, 'maintenance:completed');
      const declaredDead = passes.reduce((n, l) => n + taskCount(l, 'releaseDeadWorkers', 'workers'), 0);
      const released = passes.reduce((n, l) => n + claimsReleased(l), 0);
      report(
        `${rows.length} jobs finished, ${runs.filter((n) => n > 1).length} run more than once; ` +
          `workers declared dead ${declaredDead}, claims taken back ${released}, ` +
          `leader:lost ${linesOf(processes, 'leader:lost').length}`,
      );
      expect(rows).toHaveLength(JOBS);
      expect(runs.filter((n) => n !== 1)).toEqual([]);
      expect({ declaredDead, released }).toEqual({ declaredDead: 0, released: 0 });
      expect(linesOf(processes, 'leader:lost')).toEqual([]);
      expect(failureCounts(processes)).toMatchObject({ failed: 0, retried: 0, dead: 0, claimsLost: 0 });
    } finally {
      await stopAll(processes);
    }
  });
});
