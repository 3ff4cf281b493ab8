/**
 * The systems of the grid (grid.ts), in the order each cell runs them, and their set-up: what
 * each is, the server it runs on and the durability it reports.
 */
import type { Bench } from './benchDatabase.ts';
import { errorMessage } from './errorMessage.ts';
import { bullmqGridSetting, bullmqPeer } from './peers/bullmqPeer.ts';
import type { Peer, PeerSetting } from './peers/peer.ts';
import { pgBossGridSetting, pgBossPeer } from './peers/pgBossPeer.ts';
import { rawGridSetting, rawPeer } from './peers/rawPeer.ts';
import { sluiceGridSetting, sluicePeer } from './peers/sluicePeer.ts';
import { progress } from './progress.ts';
import type { PayloadKind } from './workload.ts';

export type SystemKey = 'sluice' | 'bullmq' | 'bullmqAof' | 'pgBoss' | 'raw';

export interface Cell {
  readonly payload: PayloadKind;
  readonly processes: number;
  readonly concurrency: number;
}

export interface GridSystem {
  readonly key: SystemKey;
  readonly peer: Peer;
  settingFor(cell: Cell): PeerSetting;
  /** Whether the MySQL/MariaDB server's counters are read around its drains. */
  readonly metered: boolean;
  /** The store's server processes on this host, by name, whose CPU is read around every window. */
  readonly serverProcesses: readonly string[];
}

const MYSQL_PROCESSES = ['mariadbd', 'mysqld'];
const REDIS_PROCESSES = ['redis-server'];
/** The postmaster, its background processes and every backend (one per connection). */
const POSTGRES_PROCESSES = ['postgres'];

export interface SystemInfo {
  readonly key: SystemKey;
  readonly name: string;
  readonly server: string;
  readonly keeps: string;
  /** Version and settings the server reported, or why the system was skipped. */
  readonly serverInfo?: string;
  readonly durability?: string;
  readonly skipped?: string;
}

/** The systems of the grid, in the order each cell runs them. */
export function gridSystems(bench: Bench): GridSystem[] {
  return [
    {
      key: 'sluice',
      peer: sluicePeer([]),
      settingFor: (c) => sluiceGridSetting(c.processes, c.concurrency),
      metered: true,
      serverProcesses: MYSQL_PROCESSES,
    },
    {
      key: 'bullmq',
      peer: bullmqPeer([], 'none'),
      settingFor: (c) => bullmqGridSetting(c.processes, c.concurrency),
      metered: false,
      serverProcesses: REDIS_PROCESSES,
    },
    {
      key: 'bullmqAof',
      peer: bullmqPeer([], 'aof-everysec'),
      settingFor: (c) => bullmqGridSetting(c.processes, c.concurrency),
      metered: false,
      serverProcesses: REDIS_PROCESSES,
    },
    {
      key: 'pgBoss',
      peer: pgBossPeer([]),
      settingFor: (c) => pgBossGridSetting(c.processes, c.concurrency),
      metered: false,
      serverProcesses: POSTGRES_PROCESSES,
    },
    {
      key: 'raw',
      peer: rawPeer(bench.url, bench.tables.raw),
      settingFor: (c) => rawGridSetting(c.processes, c.concurrency, bench.tables.raw),
      metered: true,
      serverProcesses: MYSQL_PROCESSES,
    },
  ];
}

/** Sets every system up (skipping those that do not answer); the caller tears them down. */
export async function setUpSystems(
  systems: readonly GridSystem[],
): Promise<{ ready: GridSystem[]; info: SystemInfo[] }> {
  const ready: GridSystem[] = [];
  const info: SystemInfo[] = [];
  for (const system of systems) {
    const { peer } = system;
    const base = { key: system.key, name: peer.name, server: peer.server, keeps: peer.keeps };
    if (!(await peer.available())) {
      progress(`grid: ${peer.name} skipped: ${peer.server} did not answer`);
      info.push({ ...base, skipped: `${peer.server} did not answer` });
      continue;
    }
    try {
      const serverInfo = await peer.setup();
      const durability = await peer.durability();
      progress(`grid: ${peer.name} on ${serverInfo}; durability: ${durability}`);
      ready.push(system);
      info.push({ ...base, serverInfo, durability });
    } catch (error) {
      progress(`grid: ${peer.name} skipped: setup failed: ${errorMessage(error)}`);
      info.push({ ...base, skipped: `setup failed: ${errorMessage(error)}` });
      await peer.teardown().catch(() => undefined);
    }
  }
  return { ready, info };
}
