/**
 * The verdict of a grid cell (sluice against the best peer: BullMQ by its production row, AOF
 * fsynced every second, when that row was measured; pg-boss at its best) and the systems' table
 * columns and short names, which the report's tables share.
 */
import type { CellRun } from './grid.ts';
import type { SystemKey } from './gridSystems.ts';

/** The systems' columns of the grid's tables, in order. */
export const COLUMNS: readonly { key: SystemKey; head: string }[] = [
  { key: 'sluice', head: 'sluice' },
  { key: 'bullmq', head: 'BullMQ (none)' },
  { key: 'bullmqAof', head: 'BullMQ (AOF 1 s)' },
  { key: 'pgBoss', head: 'pg-boss (best)' },
  { key: 'raw', head: 'raw loop' },
];

/** Short names of the peers in the verdict column. */
export const PEER_NAMES: Record<SystemKey, string> = {
  sluice: 'sluice',
  bullmq: 'BullMQ',
  bullmqAof: 'BullMQ AOF',
  pgBoss: 'pg-boss',
  raw: 'raw',
};

/** sluice against the best peer of a cell: BullMQ by its AOF row when measured, else its in-memory row. */
export function cellVerdict(runs: readonly CellRun[]) {
  const rate = (key: SystemKey) => runs.find((r) => r.system === key)?.jobsPerSec ?? null;
  const bullmq = rate('bullmqAof') !== null ? 'bullmqAof' : 'bullmq';
  const peers = ([bullmq, 'pgBoss'] as const)
    .map((key) => ({ key, jobsPerSec: rate(key) }))
    .filter((p): p is { key: SystemKey & typeof bullmq; jobsPerSec: number } => p.jobsPerSec !== null);
  const best = peers.reduce<(typeof peers)[number] | null>((a, b) => (!a || b.jobsPerSec > a.jobsPerSec ? b : a), null);
  const sluice = rate('sluice');
  const raw = rate('raw');
  const anyPeer = Math.max(0, ...(['bullmq', 'bullmqAof', 'pgBoss'] as const).map((k) => rate(k) ?? 0));
  return {
    bestPeer: best?.key ?? null,
    ratio: sluice !== null && best ? round2(sluice / best.jobsPerSec) : null,
    /** Against every peer row, BullMQ without persistence included. */
    ratioToAnyPeer: sluice !== null && anyPeer > 0 ? round2(sluice / anyPeer) : null,
    ratioToRaw: sluice !== null && raw ? round2(sluice / raw) : null,
  };
}

/** The same verdict over each system's whole drain from 'go', warm-up included (grid.ts, WARM_SHARE). */
export function cellVerdictFromGo(runs: readonly CellRun[]) {
  return cellVerdict(runs.map((r) => ({ ...r, jobsPerSec: r.jobsPerSecFromGo ?? r.jobsPerSec })));
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
