/**
 * The bars from one peer report: the best sluice drain against the best drain of any
 * peer (each at any of its settings, in the same run), and each system's pickup latency.
 */
import type { PeerReport } from './peerReport.ts';
import { fmt } from './report.ts';

export interface PeerVerdict {
  readonly bestSluice: { readonly setting: string; readonly jobsPerSec: number } | null;
  readonly bestPeer: { readonly peer: string; readonly setting: string; readonly jobsPerSec: number } | null;
  /** Best sluice drain ÷ best peer drain; null when either is missing. */
  readonly drainRatio: number | null;
  /** Per system: the best (lowest) p50 and p99 pickup latency among its rows, ms. */
  readonly latency: readonly LatencyVerdict[];
  /** Per system: the same for the start of delayed jobs, from their due time. */
  readonly delayed: readonly LatencyVerdict[];
}

export interface LatencyVerdict {
  readonly peer: string;
  readonly p50: number;
  readonly p99: number;
}

const isSluice = (peer: string) => peer.startsWith('sluice');

export function peerVerdict(report: PeerReport): PeerVerdict {
  const rows = report.peers.flatMap((p) =>
    p.rows.filter((r) => r.jobsPerSec !== null).map((r) => ({ peer: p.peer, row: r })),
  );
  const best = (list: typeof rows) =>
    list.reduce<(typeof rows)[number] | null>(
      (a, b) => (a === null || (b.row.jobsPerSec ?? 0) > (a.row.jobsPerSec ?? 0) ? b : a),
      null,
    );
  const sluice = best(rows.filter((r) => isSluice(r.peer)));
  const peer = best(rows.filter((r) => !isSluice(r.peer)));
  return {
    bestSluice: sluice && {
      setting: `${sluice.row.setting} c${sluice.row.concurrency}`,
      jobsPerSec: Math.round(sluice.row.jobsPerSec ?? 0),
    },
    bestPeer: peer && {
      peer: peer.peer,
      setting: `${peer.row.setting} c${peer.row.concurrency}`,
      jobsPerSec: Math.round(peer.row.jobsPerSec ?? 0),
    },
    drainRatio:
      sluice && peer ? Math.round(((sluice.row.jobsPerSec ?? 0) / (peer.row.jobsPerSec ?? 1)) * 100) / 100 : null,
    latency: bestLatencies(report, 'latencyMs'),
    delayed: bestLatencies(report, 'delayedMs'),
  };
}

/** Per system, the lowest p50 and the lowest p99 among its rows (0.1 ms). */
function bestLatencies(report: PeerReport, key: 'latencyMs' | 'delayedMs'): LatencyVerdict[] {
  const round1 = (n: number) => Math.round(n * 10) / 10;
  return report.peers.flatMap((p) => {
    const measured = p.rows.flatMap((r) => (r[key] ? [r[key]] : []));
    if (measured.length === 0) return [];
    return [
      {
        peer: p.peer,
        p50: round1(Math.min(...measured.map((l) => l.p50))),
        p99: round1(Math.min(...measured.map((l) => l.p99))),
      },
    ];
  });
}

export function renderPeerVerdict(v: PeerVerdict): string {
  const drain =
    v.bestSluice && v.bestPeer
      ? `    best sluice drain ${fmt(v.bestSluice.jobsPerSec)} jobs/s (${v.bestSluice.setting}) ÷ best peer drain ${fmt(v.bestPeer.jobsPerSec)} jobs/s (${v.bestPeer.peer} ${v.bestPeer.setting}) = ${v.drainRatio?.toFixed(2)}`
      : '    best sluice drain ÷ best peer drain: not measured (a side is missing)';
  const list = (ls: readonly LatencyVerdict[]) =>
    ls.map((l) => `${l.peer} p50 ${l.p50} ms, p99 ${l.p99} ms`).join('; ') || 'not measured';
  return [
    drain,
    `    pickup latency (best row of each): ${list(v.latency)}`,
    `    delayed start, from the due time (best row of each): ${list(v.delayed)}`,
  ].join('\n');
}
