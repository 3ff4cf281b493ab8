import type mysql from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { workerKeyOf } from '../../src/model/claimKey.ts';
import { type GaleraCluster, startCluster } from '../cluster/galeraCluster.ts';
import {
  batchTally,
  type ClusterDatabase,
  clusterDatabase,
  failureCounts,
  readOn,
  report,
  scalarOn,
  startMaintenance,
  startWorker,
  stopAll,
  waitDrained,
} from '../cluster/galeraFleet.ts';
import type { SluiceProcess } from '../helpers/spawnSluice.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Issue 12, node loss: a node SIGKILLed mid-drain (its mariadbd; the worker and maintenance
 * processes pointed at it stay up) and restarted — nothing lost, nothing committed twice; then the
 * maintenance leader's node killed — another process leads once the lease ran out on its own
 * clock, and the dead node's claims are recovered at that take-over (standbys kept watching the
 * worker registry). Recovery times are printed, never asserted. Workers heartbeat every 2 s and
 * are dead after 2.5 missed beats (the defaults); passes run every 2 s; the lease is 10 s here
 * (30 s by default) to keep the suite short.
 */
const JOBS = Number(process.env.SLUICE_GALERA_FAILOVER_JOBS ?? 1_500);
const LEASE_MS = 10_000;

let cluster: GaleraCluster;
let db: ClusterDatabase;
/** The fleet of the running test: a worker of each claim strategy and a maintenance process per node. */
let fleet: Fleet;

interface Fleet {
  readonly processes: SluiceProcess[];
  /** Per node: its workers and its maintenance process. */
  readonly byNode: { workers: SluiceProcess[]; maintenance: SluiceProcess }[];
}

beforeAll(async () => {
  cluster = await startCluster({ onProgress: (line) => console.log(line) });
  db = await clusterDatabase(cluster, 'sluice_failover');
});

beforeEach(async () => {
  const byNode = [0, 1, 2].map((node) => ({
    workers: [
      startWorker(db, { node, queues: 'failover', claim: 'random-head', concurrency: 10 }),
      startWorker(db, { node, queues: 'failover', claim: 'skip-locked', concurrency: 10 }),
    ],
    maintenance: startMaintenance(db, { node, leaseMs: LEASE_MS }),
  }));
  fleet = { byNode, processes: byNode.flatMap((n) => [...n.workers, n.maintenance]) };
  await Promise.all(fleet.processes.map((p) => p.ready));
});

afterEach(async () => {
  await stopAll(fleet.processes);
});

afterAll(async () => {
  await db?.close();
  await cluster?.clean();
});

const pool = (index: number) => db.nodes[index] as mysql.Pool;

/** The node whose maintenance process holds the lease (read on node `via`; waits for a first leader). */
async function leaderNode(via: number): Promise<number> {
  return waitFor(
    async () => {
      const rows = await readOn<{ holder: string }>(
        pool(via),
        "SELECT holder FROM sluice_leases WHERE name = 'maintenance'",
      );
      const holder = rows[0]?.holder ?? '';
      const node = fleet.byNode.findIndex((n) => holder.includes(`-${n.maintenance.pid}~`));
      return node < 0 ? undefined : node + 1;
    },
    { what: 'a maintenance leader' },
  ).then((n) => n - 1);
}

/** Worker ids of node `index`'s workers (from their worker:started lines). */
function workerIdsOf(index: number): string[] {
  return (fleet.byNode[index] as Fleet['byNode'][number]).workers.map(
    (w) => (w.events('worker:started')[0]?.workerId as string) ?? '',
  );
}

/** Jobs claimed by node `index`'s workers, read on node `via`. */
async function claimsOf(index: number, via: number): Promise<number> {
  const ids = workerIdsOf(index);
  return scalarOn(
    pool(via),
    `SELECT COUNT(*) FROM sluice_jobs WHERE ${ids.map(() => 'lock_id LIKE ?').join(' OR ')}`,
    ids.map((id) => `${workerKeyOf(id)}.%`),
  );
}

/** Enqueues 2 × JOBS through two nodes; returns the batch ids. */
async function enqueueTwo(tag: number, through: readonly [number, number]): Promise<number[]> {
  const jobs = Array.from({ length: JOBS }, (_, n) => ({ name: 'effect', queue: 'failover', payload: { b: tag, n } }));
  const first = await db.sluice(through[0]).enqueueBatch(jobs);
  const second = await db.sluice(through[1]).enqueueBatch(jobs);
  return [first.batchId as number, second.batchId as number];
}

/** Kills node `victim` once it holds claims mid-drain; measures until its workers hold none (read on `survivor`). */
async function killMidDrain(victim: number, survivor: number): Promise<{ killedAt: number; claimsAtKill: number }> {
  await waitFor(async () => (await claimsOf(victim, survivor)) > 0, {
    what: `node ${victim + 1}'s workers holding claims`,
  });
  const killedAt = performance.now();
  await cluster.kill(victim);
  const claimsAtKill = await claimsOf(victim, survivor);
  return { killedAt, claimsAtKill };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

describe('node loss on a 3-node Galera cluster', () => {
  it('a node SIGKILLed mid-drain and restarted: its claims are recovered, nothing is lost or committed twice', async () => {
    const batches = await enqueueTwo(1, [0, 1]);
    const victim = (await leaderNode(0)) === 2 ? 1 : 2;
    const survivor = victim === 1 ? 2 : 1;
    const { killedAt, claimsAtKill } = await killMidDrain(victim, survivor);
    await waitFor(async () => (await claimsOf(victim, survivor)) === 0, {
      what: `node ${victim + 1}'s claims released`,
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    const recovered = performance.now() - killedAt;
    const ids = workerIdsOf(victim);
    const registered = () => scalarOn(pool(survivor), 'SELECT COUNT(*) FROM sluice_workers WHERE id IN (?)', [ids]);
    await waitFor(async () => (await registered()) === 0, {
      what: `node ${victim + 1}'s workers removed from the registry`,
    });
    const restartStarted = performance.now();
    await cluster.restart(victim);
    const rejoined = performance.now() - restartStarted;
    // The workers on the restarted node reconnect by themselves: declared dead and removed from the
    // registry while their node was down, their next heartbeat registers them again.
    await waitFor(async () => (await registered()) === 2, {
      what: `node ${victim + 1}'s workers registered again`,
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const backAt = performance.now() - killedAt;
    report(
      `SIGKILL of node ${victim + 1} mid-drain: its workers' ${claimsAtKill} claims released ${seconds(recovered)} after the kill; ` +
        `node rejoined in ${seconds(rejoined)}; its workers registered again ${seconds(backAt)} after the kill`,
    );
    await waitDrained(db, 'failover', { index: survivor });
    for (const batchId of batches) {
      for (const index of [0, 1, 2]) {
        const tally = await batchTally(db, batchId, index);
        expect(tally, `batch ${batchId} on node ${index + 1}`).toMatchObject({
          size: JOBS,
          finished: JOBS,
          live: 0,
          dead: 0,
          once: JOBS,
          missing: 0,
          doubled: 0,
        });
      }
    }
    report(`counted by the processes around the kill: ${JSON.stringify(failureCounts(fleet.processes))}`);
  });

  it("the leader's node SIGKILLed: another process leads after the lease, and the dead node's claims are recovered then", async () => {
    const batches = await enqueueTwo(2, [0, 1]);
    const victim = await leaderNode(0);
    const survivor = (victim + 1) % 3;
    const others = fleet.byNode.map((n) => n.maintenance).filter((_, i) => i !== victim);
    const acquiredBefore = others.map((m) => m.events('leader:acquired').length);
    const { killedAt, claimsAtKill } = await killMidDrain(victim, survivor);
    const newLeader = await waitFor(
      () => others.find((m, i) => m.events('leader:acquired').length > (acquiredBefore[i] as number)),
      { what: 'another maintenance process leading', timeoutMs: 90_000, intervalMs: 100 },
    );
    const ledAfter = performance.now() - killedAt;
    await waitFor(async () => (await claimsOf(victim, survivor)) === 0, {
      what: `the dead leader node's claims released`,
      timeoutMs: 90_000,
      intervalMs: 100,
    });
    const recovered = performance.now() - killedAt;
    report(
      `SIGKILL of the leader's node ${victim + 1} (lease ${LEASE_MS} ms): node ${fleet.byNode.findIndex((n) => n.maintenance === newLeader) + 1} ` +
        `leads ${seconds(ledAfter)} after the kill; the dead node's ${claimsAtKill} claims released ${seconds(recovered)} after it`,
    );
    await cluster.restart(victim);
    await waitDrained(db, 'failover', { index: survivor });
    for (const batchId of batches)
      expect(await batchTally(db, batchId, victim)).toMatchObject({
        size: JOBS,
        finished: JOBS,
        dead: 0,
        once: JOBS,
        missing: 0,
        doubled: 0,
      });
    // The old leader knew it had lost the lease (its node gone, its renewals failed).
    expect((fleet.byNode[victim] as Fleet['byNode'][number]).maintenance.events('leader:lost').length).toBeGreaterThan(
      0,
    );
  });
});
