import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import mysql from 'mysql2/promise';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSluice } from '../../src/index.ts';
import { type GaleraCluster, processesOf, startCluster } from '../cluster/galeraCluster.ts';
import { waitFor } from '../helpers/waitFor.ts';

/**
 * Proves the Galera harness against a real 3-node cluster: replication, the GET_LOCK trap, a
 * SIGKILLed node, its rejoin, and a clean stop. The tests run in order and share one cluster.
 * Timings are printed, never asserted.
 */

const NODE1 = 0;
const NODE2 = 1;
const NODE3 = 2;

let cluster: GaleraCluster;
const report = (line: string) => console.log(`[galera-test] ${line}`);

beforeAll(async () => {
  const t0 = performance.now();
  cluster = await startCluster({ onProgress: (line) => console.log(line) });
  report(`cluster start took ${seconds(performance.now() - t0)}`);
});

afterAll(async () => {
  await cluster?.clean();
});

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A connection to one node that reads its own cluster's latest commits (wsrep_sync_wait=1). */
async function connect(index: number, database = 'test'): Promise<mysql.Connection> {
  const url = new URL(cluster.urls[index]!);
  url.pathname = `/${database}`;
  const connection = await mysql.createConnection({ uri: url.toString(), connectTimeout: 5_000 });
  await connection.query('SET SESSION wsrep_sync_wait = 1');
  return connection;
}

async function scalar<T>(connection: mysql.Connection, sql: string, params: unknown[] = []): Promise<T> {
  const [rows] = (await connection.query(sql, params)) as unknown as [Record<string, T>[]];
  return Object.values(rows[0]!)[0] as T;
}

async function clusterSize(connection: mysql.Connection): Promise<number> {
  const [rows] = (await connection.query("SHOW STATUS LIKE 'wsrep_cluster_size'")) as unknown as [{ Value: string }[]];
  return Number(rows[0]?.Value);
}

async function withConnections<T>(
  indexes: number[],
  body: (...connections: mysql.Connection[]) => Promise<T>,
): Promise<T> {
  const connections = await Promise.all(indexes.map((i) => connect(i)));
  try {
    return await body(...connections);
  } finally {
    await Promise.all(connections.map((c) => c.end()));
  }
}

/**
 * Inserts rows into `test.writes` on one node, one autocommit INSERT after another, until
 * `stop()` is called; records when each commit returned and any error (then reconnects).
 */
function startWriter(index: number, note: string) {
  const commits: number[] = [];
  const errors: string[] = [];
  let stopped = false;
  const done = (async () => {
    let connection = await connect(index);
    while (!stopped) {
      try {
        await connection.query('INSERT INTO writes (node, note) VALUES (?, ?)', [index + 1, note]);
        commits.push(performance.now());
      } catch (error) {
        errors.push(`${(error as { code?: string }).code}: ${(error as Error).message}`);
        await connection.end().catch(() => {});
        await sleep(50);
        connection = await connect(index);
      }
    }
    await connection.end();
  })();
  return {
    commits,
    errors,
    stop: async () => {
      stopped = true;
      await done;
    },
  };
}

/** The longest wait between two consecutive commits (ms). */
function longestGap(commits: number[]): number {
  let gap = 0;
  for (let i = 1; i < commits.length; i++) gap = Math.max(gap, commits[i]! - commits[i - 1]!);
  return gap;
}

describe('a 3-node Galera cluster started by the harness', () => {
  it('serves root over TCP on every node, each Synced in a cluster of 3', async () => {
    expect(cluster.urls).toHaveLength(3);
    for (const url of cluster.urls) expect(url).toMatch(/^mysql:\/\/root@127\.0\.0\.1:\d+\/test$/);
    await withConnections([NODE1, NODE2, NODE3], async (...nodes) => {
      for (const node of nodes) {
        expect(await clusterSize(node)).toBe(3);
        expect(await scalar(node, 'SELECT @@wsrep_on')).toBe(1);
      }
    });
  });

  it('replicates a write on node 1 to node 3 (read with wsrep_sync_wait=1)', async () => {
    await withConnections([NODE1, NODE3], async (node1, node3) => {
      await node1.query(
        'CREATE TABLE writes (id BIGINT AUTO_INCREMENT PRIMARY KEY, node INT NOT NULL, note VARCHAR(40) NOT NULL)',
      );
      const [result] = (await node1.query("INSERT INTO writes (node, note) VALUES (1, 'hello')")) as unknown as [
        mysql.ResultSetHeader,
      ];
      expect(await scalar(node3, 'SELECT note FROM writes WHERE id = ?', [result.insertId])).toBe('hello');
    });
  });

  it('lets GET_LOCK succeed on two nodes at once: a named lock excludes nothing across the cluster', async () => {
    await withConnections([NODE1, NODE2], async (node1, node2) => {
      expect(await scalar(node1, "SELECT GET_LOCK('x', 0)")).toBe(1);
      // Held on node 1, yet node 2 grants it too: GET_LOCK is local to one node.
      expect(await scalar(node2, "SELECT GET_LOCK('x', 0)")).toBe(1);
      await node1.query("SELECT RELEASE_LOCK('x')");
      await node2.query("SELECT RELEASE_LOCK('x')");
    });
  });

  it('applies the sluice schema once through node 1, and node 3 has every table', async () => {
    await withConnections([NODE1], (node1) => node1.query('CREATE DATABASE sluice_galera'));
    const url = new URL(cluster.urls[NODE1]!);
    url.pathname = '/sluice_galera';
    const sluice = createSluice({ url: url.toString(), logger: pino({ level: 'silent' }) });
    try {
      const { applied } = await sluice.migrate();
      expect(applied.length).toBeGreaterThan(0);
    } finally {
      await sluice.close();
    }
    const tablesOn = async (index: number) => {
      const connection = await connect(index, 'sluice_galera');
      try {
        const [rows] = (await connection.query(
          "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = 'sluice_galera' ORDER BY 1",
        )) as unknown as [{ t: string }[]];
        return rows.map((r) => r.t);
      } finally {
        await connection.end();
      }
    };
    const onNode1 = await tablesOn(NODE1);
    expect(onNode1).toContain('sluice_jobs');
    expect(await tablesOn(NODE3)).toEqual(onNode1);
  });

  it('keeps accepting writes on nodes 1 and 3 after node 2 is SIGKILLed', async () => {
    const writers = [startWriter(NODE1, 'around-kill'), startWriter(NODE3, 'around-kill')];
    try {
      await waitFor(() => writers.every((w) => w.commits.length >= 20), { what: 'writes before the kill' });
      const killedAt = performance.now();
      await cluster.kill(NODE2);
      await withConnections([NODE1, NODE3], (node1, node3) =>
        waitFor(async () => (await clusterSize(node1)) === 2 && (await clusterSize(node3)) === 2, {
          timeoutMs: 60_000,
          intervalMs: 100,
          what: 'nodes 1 and 3 to evict node 2',
        }),
      );
      report(`node 2 evicted ${seconds(performance.now() - killedAt)} after its SIGKILL`);
      const evicted = writers.map((w) => w.commits.length);
      await waitFor(() => writers.every((w, i) => w.commits.length >= evicted[i]! + 20), {
        what: 'writes after the eviction',
      });
      for (const w of writers) await w.stop();
      const [w1, w3] = writers;
      report(
        `longest write stall after SIGKILL of node 2: node 1 ${seconds(longestGap(w1!.commits))}, ` +
          `node 3 ${seconds(longestGap(w3!.commits))}`,
      );
      expect(writers.flatMap((w) => w.errors)).toEqual([]);
    } finally {
      for (const w of writers) await w.stop();
    }
    // A write after the eviction, by a node that no longer sees node 2, for the rejoin to catch up.
    await withConnections([NODE3], (node3) =>
      node3.query("INSERT INTO writes (node, note) VALUES (3, 'after-eviction')"),
    );
  });

  it('restarts node 2: it rejoins (cluster size 3) and has every write made while it was down', async () => {
    const t0 = performance.now();
    await cluster.restart(NODE2);
    report(`node 2 rejoin took ${seconds(performance.now() - t0)}`);
    await withConnections([NODE1, NODE2, NODE3], async (node1, node2, node3) => {
      for (const node of [node1, node2, node3]) expect(await clusterSize(node)).toBe(3);
      const summary = 'SELECT COUNT(*) AS n, SUM(id) AS s FROM writes';
      const [[onNode1]] = (await node1.query(summary)) as unknown as [[{ n: number; s: string }]];
      const [[onNode2]] = (await node2.query(summary)) as unknown as [[{ n: number; s: string }]];
      expect(onNode2).toEqual(onNode1);
      expect(await scalar(node2, "SELECT COUNT(*) FROM writes WHERE note = 'after-eviction'")).toBe(1);
      expect(await scalar(node2, "SELECT COUNT(*) FROM writes WHERE note = 'around-kill'")).toBeGreaterThan(40);
      // And node 2 takes writes again, seen by the others.
      await node2.query("INSERT INTO writes (node, note) VALUES (2, 'after-rejoin')");
      expect(await scalar(node3, "SELECT COUNT(*) FROM writes WHERE note = 'after-rejoin'")).toBe(1);
    });
  });

  it('stops without leaving a mariadbd of ours, and clean removes the folder', async () => {
    const dir = cluster.dir;
    expect(processesOf(dir).length).toBeGreaterThanOrEqual(3);
    const t0 = performance.now();
    await cluster.stop();
    report(`stop took ${seconds(performance.now() - t0)}`);
    expect(processesOf(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(true); // stop keeps the datadirs and logs
    await cluster.clean();
    expect(processesOf(dir)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });
});
