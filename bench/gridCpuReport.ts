/**
 * The grid's CPU table: what one drained job cost each system in CPU, its consumer processes and
 * its store's server processes, every system read alike from /proc (jobCpu.ts). Under it, for each
 * cell sluice loses, why in those numbers: a 2-core host runs every system CPU-bound at most
 * settings, so the system that spends fewer µs per job drains faster, and the split says whether
 * sluice's workers or its server spend the difference.
 */
import { availableParallelism } from 'node:os';
import { type CellResult, type CellRun, cellLabel } from './grid.ts';
import { COLUMNS, cellVerdict, PEER_NAMES } from './gridVerdict.ts';
import { type JobCpu, totalUs } from './jobCpu.ts';
import { fmt, table } from './report.ts';

export function cpuTable(cells: readonly CellResult[], cores = availableParallelism()): string {
  const rows = cells.map(({ cell, runs }) => [
    cellLabel(cell),
    ...COLUMNS.map(({ key }) => cpuCell(runs.find((r) => r.system === key)?.cpu)),
  ]);
  return [
    `CPU per drained job, µs: consumer processes + server processes = total (utime + stime from /proc over each drain's window, every system alike; server: mariadbd, postgres and its backends, redis-server); on this host's ${cores} cores a drain needing C µs per job tops out near ${cores} × 10⁶ ÷ C jobs/s`,
    table(['cell', ...COLUMNS.map((c) => c.head)], rows),
    ...lostCells(cells, cores),
  ].join('\n');
}

/** "120 + 52 = 172", or what of it was read. */
export function cpuCell(cpu: JobCpu | null | undefined): string {
  if (!cpu) return '—';
  const part = (us: number | null) => (us === null ? '?' : fmt(us));
  const total = totalUs(cpu);
  return `${part(cpu.clientUs)} + ${part(cpu.serverUs)}${total === null ? '' : ` = ${fmt(total)}`}`;
}

/** One line per cell below 1.0: sluice's CPU per job against the winning peer's, and where it goes. */
function lostCells(cells: readonly CellResult[], cores: number): string[] {
  const lines = cells.flatMap(({ cell, runs }) => {
    const verdict = cellVerdict(runs);
    if (verdict.ratio === null || verdict.ratio >= 1 || verdict.bestPeer === null) return [];
    const sluice = runs.find((r) => r.system === 'sluice');
    const peer = runs.find((r) => r.system === verdict.bestPeer);
    return [`    ${cellLabel(cell)}: ${why(sluice, peer, PEER_NAMES[verdict.bestPeer], cores)}`];
  });
  return lines.length === 0 ? [] : ['  where sluice trails the best peer:', ...lines];
}

function why(sluice: CellRun | undefined, peer: CellRun | undefined, peerName: string, cores: number): string {
  const a = totalUs(sluice?.cpu);
  const b = totalUs(peer?.cpu);
  if (!sluice?.cpu || !peer?.cpu || a === null || b === null) return 'CPU not read for both systems';
  const more = a / b - 1;
  const clientGap = (sluice.cpu.clientUs ?? 0) - (peer.cpu.clientUs ?? 0);
  const serverGap = (sluice.cpu.serverUs ?? 0) - (peer.cpu.serverUs ?? 0);
  const where =
    more <= 0
      ? 'no more CPU per job than the peer: not CPU-bound here (latency or lock waits)'
      : `${(more * 100).toFixed(0)} % more CPU per job: ${signed(clientGap)} µs in the workers, ${signed(serverGap)} µs in the server`;
  const ceiling = (us: number) => fmt((cores * 1e6) / us);
  return `sluice ${cpuCell(sluice.cpu)} µs per job vs ${peerName} ${cpuCell(peer.cpu)}: ${where}; ${cores} cores allow ${ceiling(a)} vs ${ceiling(b)} jobs/s, measured ${fmt(sluice.jobsPerSec ?? 0)} vs ${fmt(peer.jobsPerSec ?? 0)}`;
}

function signed(us: number): string {
  return `${us < 0 ? '−' : '+'}${fmt(Math.abs(us))}`;
}
