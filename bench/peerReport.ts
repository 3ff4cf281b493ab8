import type { PeerSetting } from './peers/peer.ts';

/** What one run of the peers bench measured: the shapes peers.ts fills and peerVerdict.ts judges. */

export interface Latency {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly samples: number;
}

export interface PeerRow {
  readonly setting: PeerSetting['setting'];
  readonly concurrency: number;
  readonly describe: string;
  /** Median of the rounds' rates; null when the row failed. */
  readonly jobsPerSec: number | null;
  readonly runs: readonly number[];
  /** Set when the drains were cut off: the window in seconds and the most jobs left in a round. */
  readonly cutOff?: { readonly seconds: number; readonly left: number };
  readonly latencyMs: Latency | null;
  /** From a delayed job's due time to its handler's start. */
  readonly delayedMs: Latency | null;
  readonly error?: string;
}

export interface PeerOutcome {
  readonly peer: string;
  readonly server: string;
  /** The server's version and persistence settings, when it answered. */
  readonly serverInfo?: string;
  readonly keeps: string;
  /** Why the peer has no rows (server did not answer, or setup failed). */
  readonly skipped?: string;
  readonly rows: readonly PeerRow[];
}

export interface PeerReport {
  readonly jobCount: number;
  readonly payloadBytes: string;
  readonly rounds: number;
  readonly latencySamples: number;
  readonly peers: readonly PeerOutcome[];
  readonly wallSeconds: number;
  readonly loadAtStart: number;
  readonly loadAtEnd: number;
}
