/**
 * Pickup latency of the grid's queues (the raw loop has none): one idle consumer process at
 * concurrency 50 per system, jobs enqueued one by one 100–300 ms apart from this process, from the
 * enqueue call to the handler's start (peers/peer.ts measurePickup), p50 / p90 / p99.
 */
import { errorMessage } from './errorMessage.ts';
import type { GridSystem, SystemKey } from './gridSystems.ts';
import type { Latency } from './peerReport.ts';
import { percentiles } from './peers.ts';
import { progress } from './progress.ts';

const LATENCY_CONCURRENCY = 50;

export interface LatencyRow {
  readonly system: SystemKey;
  readonly latencyMs: Latency | null;
  readonly error?: string;
}

export async function measureGridLatency(systems: readonly GridSystem[], samples: number): Promise<LatencyRow[]> {
  const rows: LatencyRow[] = [];
  for (const system of systems.filter((s) => s.key !== 'raw')) {
    const setting = system.settingFor({ payload: 'small', processes: 1, concurrency: LATENCY_CONCURRENCY });
    try {
      await system.peer.clear();
      const latency = percentiles(await system.peer.pickupLatency(setting, samples, false));
      progress(`pickup ${system.peer.name}: p50 ${latency.p50.toFixed(1)} ms, p90 ${latency.p90.toFixed(1)} ms`);
      rows.push({ system: system.key, latencyMs: latency });
    } catch (error) {
      progress(`pickup ${system.peer.name}: failed: ${errorMessage(error)}`);
      rows.push({ system: system.key, latencyMs: null, error: errorMessage(error) });
    }
    await system.peer.clear().catch(() => undefined);
  }
  return rows;
}
