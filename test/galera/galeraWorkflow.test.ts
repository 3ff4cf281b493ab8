import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSpec } from '../../src/index.ts';
import {
  type ClusterDatabase,
  clusterDatabase,
  conflictsSoFar,
  failureCounts,
  report,
  scalarOn,
  startWorker,
  stopAll,
  waitDrained,
} from '../cluster/galeraFleet.ts';
import { sharedCluster } from '../cluster/sharedCluster.ts';

/**
 * A workflow drained on a 3-node cluster by worker processes on every node: GROUPS fan-outs (a root
 * and its middles; every tenth middle also waits for the next group's root, so two parents on
 * different nodes can finish at once), each feeding a fan-in, and one final job after every fan-in.
 * Each job is `graphNode` (exactly-once), whose effect row proves its order two ways: by commits
 * (the parents' rows its own transaction saw at its start) and by one clock (its start and its
 * parents' ends, all NOW(6) on node 1 whichever node ran them). No maintenance process runs: a
 * child that only the reconciler could free would stop the drain.
 */
const QUEUE = 'graph';
const GROUPS = 20;
const PER_GROUP = 100;
const TOTAL = GROUPS * PER_GROUP + 1;
const FINAL = GROUPS * PER_GROUP;
const DRAIN_TIMEOUT_MS = 600_000;

let db: ClusterDatabase;

beforeAll(async () => {
  db = await clusterDatabase(await sharedCluster(), 'sluice_workflow');
  await db.nodes[0]?.query(`CREATE TABLE galera_graph (
    id           BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    n            INT NOT NULL,
    job_id       BIGINT UNSIGNED NOT NULL,
    pid          INT NOT NULL,
    parents      INT NOT NULL,
    parents_seen INT NOT NULL,
    started_at   DATETIME(6) NOT NULL,
    ended_at     DATETIME(6) NOT NULL,
    KEY ix_n (n)
  ) ENGINE=InnoDB`);
});

afterAll(async () => {
  await db?.close();
});

/** Each job's parents by n (the graph the test enqueues), in the order of n. */
function graph(): Map<number, number[]> {
  const parents = new Map<number, number[]>();
  const root = (g: number) => g * PER_GROUP;
  for (let g = 0; g < GROUPS; g++) {
    parents.set(root(g), []);
    const middles: number[] = [];
    for (let m = 1; m < PER_GROUP - 1; m++) {
      middles.push(root(g) + m);
      parents.set(root(g) + m, m % 10 === 0 ? [root(g), root((g + 1) % GROUPS)] : [root(g)]);
    }
    parents.set(root(g) + PER_GROUP - 1, middles);
  }
  parents.set(
    FINAL,
    Array.from({ length: GROUPS }, (_, g) => root(g) + PER_GROUP - 1),
  );
  return parents;
}

interface Effect {
  n: number;
  parents: number;
  parents_seen: number;
  started_at: string;
  ended_at: string;
  pid: number;
}

describe('a workflow on a 3-node Galera cluster', () => {
  it(
    `${TOTAL} jobs drained by workers on every node: each once, never before all its parents committed, no child left held`,
    async () => {
      const clock = { SLUICE_GALERA_CLOCK_URL: db.urls[0] as string };
      const workers = [0, 1, 2].map((node) => startWorker(db, { node, queues: QUEUE, concurrency: 10, env: clock }));
      try {
        await Promise.all(workers.map((w) => w.ready));
        const conflictsBefore = await conflictsSoFar(db);
        const edges = graph();
        const jobs: JobSpec[] = [...edges].map(([n, parents]) => ({
          name: 'graphNode',
          queue: QUEUE,
          ref: `n${n}`,
          parents: parents.map((p) => `n${p}`),
          payload: { n, parents },
        }));
        const started = performance.now();
        const { batchId } = await db.sluice(0).enqueueBatch(jobs);
        await waitDrained(db, QUEUE, { timeoutMs: DRAIN_TIMEOUT_MS });
        const seconds = (performance.now() - started) / 1000;
        const conflicts = (await conflictsSoFar(db)) - conflictsBefore;

        const [rows] = (await db.nodes[1]!.query(
          `SELECT n, parents, parents_seen, pid,
                DATE_FORMAT(started_at, '%Y-%m-%d %H:%i:%s.%f') AS started_at,
                DATE_FORMAT(ended_at, '%Y-%m-%d %H:%i:%s.%f') AS ended_at
         FROM galera_graph ORDER BY n`,
        )) as unknown as [Effect[]];
        // Every job once: one committed effect row per n.
        expect({ rows: rows.length, jobs: new Set(rows.map((r) => r.n)).size }).toEqual({ rows: TOTAL, jobs: TOTAL });
        // By commits: every job saw all its parents' rows committed when it started.
        expect(rows.filter((r) => Number(r.parents_seen) !== Number(r.parents)).map((r) => r.n)).toEqual([]);
        // By one clock (node 1's NOW(6)): every job started after each of its parents' handlers ended.
        const byN = new Map(rows.map((r) => [Number(r.n), r]));
        const early: string[] = [];
        for (const [n, parents] of edges) {
          const child = byN.get(n) as Effect;
          for (const p of parents) {
            const parent = byN.get(p) as Effect;
            if (!(child.started_at > parent.ended_at))
              early.push(`${n} at ${child.started_at} ≤ ${p} ended ${parent.ended_at}`);
          }
        }
        expect(early).toEqual([]);
        // No child left held, no edge left behind, on any node.
        for (const node of db.nodes) {
          for (const table of ['sluice_jobs', 'sluice_job_edges', 'sluice_job_holds', 'sluice_dead_jobs'])
            expect(await scalarOn(node, `SELECT COUNT(*) FROM ${table}`), table).toBe(0);
          expect(await scalarOn(node, 'SELECT COUNT(*) FROM sluice_job_history WHERE batch_id = ?', [batchId])).toBe(
            TOTAL,
          );
        }
        const counts = failureCounts(workers);
        const final = byN.get(FINAL) as Effect;
        const lastParentEnd = (edges.get(FINAL) as number[])
          .map((p) => (byN.get(p) as Effect).ended_at)
          .sort()
          .at(-1) as string;
        const nodesUsed = new Set(rows.map((r) => r.pid)).size;
        report(
          `workflow of ${TOTAL} jobs drained by ${nodesUsed} worker processes on 3 nodes in ${seconds.toFixed(1)} s; ` +
            `final job started ${msBetween(lastParentEnd, final.started_at)} ms after its last parent's handler ended; ` +
            `certification conflicts (wsrep_local_cert_failures + wsrep_local_bf_aborts): ${conflicts}; ` +
            `counted against jobs: ${JSON.stringify(counts)}`,
        );
        expect(nodesUsed).toBe(3);
        expect(counts).toMatchObject({ failed: 0, retried: 0, dead: 0, workerErrors: 0, claimsLost: 0 });
      } finally {
        await stopAll(workers);
      }
    },
    DRAIN_TIMEOUT_MS + 60_000,
  );
});

/** Milliseconds from one 'YYYY-MM-DD hh:mm:ss.ffffff' time to another (same clock). */
function msBetween(from: string, to: string): number {
  const ms = (t: string) => Date.parse(`${t.slice(0, 23).replace(' ', 'T')}Z`) + Number(t.slice(23)) / 1000;
  return Math.round(ms(to) - ms(from));
}
