/**
 * `npm run bench -- peers`: sluice's peers on this machine, each on its own store, with the workload
 * of sluice's bench (100,000 no-op jobs of bench/workload.ts, enqueued in bulk before the timed
 * window) drained by one consumer process (peers/peer.ts says how it is timed):
 *   - BullMQ on Redis (peers/bullmqPeer.ts), pg-boss on PostgreSQL (peers/pgBossPeer.ts);
 *   - each at its documented defaults with only the concurrency chosen (50, 500 and 1,000; pg-boss
 *     50 and 500, where it drains next to nothing), and at the
 *     best setting found for it (what that sets is printed with the table);
 *   - per row: ROUNDS drains (the median is reported), then two latency probes of
 *     LATENCY_SAMPLES jobs each on an idle consumer (p50/p90/p99, nearest rank): pickup (from
 *     enqueue to handler start) and delayed start (jobs due 300–700 ms after their enqueue, from
 *     that due time to handler start).
 * A peer whose server does not answer is skipped with a line saying so; a row that fails is
 * reported as failed and the run goes on. Progress goes to stderr; stdout gets the table and, as
 * its last line, the result as JSON (also written to bench/results/peers.json).
 * sluice is a row of the same table (peers/sluicePeer.ts), measured by the same harness; the report
 * ends with the best sluice drain ÷ the best peer drain and each system's pickup latency
 * (peerVerdict.ts). bench/run.ts includes all of it as its section (d).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { median } from './median.ts';
import type { Latency, PeerOutcome, PeerReport, PeerRow } from './peerReport.ts';
import { BULLMQ_SETTINGS, bullmqPeer } from './peers/bullmqPeer.ts';
import { isMain } from './peers/consumerChild.ts';
import type { Peer, PeerSetting } from './peers/peer.ts';
import { PG_BOSS_SETTINGS, pgBossPeer } from './peers/pgBossPeer.ts';
import { SLUICE_SETTINGS, sluicePeer } from './peers/sluicePeer.ts';
import { peerVerdict, renderPeerVerdict } from './peerVerdict.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { makeJobs } from './workload.ts';

export const PEER_JOB_COUNT = 100_000;
export const PEER_ROUNDS = 3;
export const LATENCY_SAMPLES = 30;
/** Cut-off of one drain unless the setting sets a shorter one (as sluice's bench: 45 s). */
export const PEER_DRAIN_LIMIT_SECONDS = 45;
const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));

export interface PeerOptions {
  readonly peers?: readonly Peer[];
  readonly jobCount?: number;
  readonly rounds?: number;
  readonly latencySamples?: number;
}

/**
 * Every peer's rows. The drains are interleaved — round 1 of every row, then round 2, … — so that
 * a change in the machine's load during the run (a shared 2-core host) falls on every system
 * alike rather than on whichever ran at that moment; then each row's pickup latency. Never throws
 * for a peer or a row that fails.
 */
export async function measurePeers(options: PeerOptions = {}): Promise<PeerReport> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const jobCount = options.jobCount ?? PEER_JOB_COUNT;
  const rounds = options.rounds ?? PEER_ROUNDS;
  const latencySamples = options.latencySamples ?? LATENCY_SAMPLES;
  const peers = options.peers ?? [
    sluicePeer(SLUICE_SETTINGS),
    bullmqPeer(BULLMQ_SETTINGS),
    pgBossPeer(PG_BOSS_SETTINGS),
  ];
  const jobs = makeJobs(jobCount);
  const sizes = jobs.map((j) => JSON.stringify(j.payload).length);
  const outcomes: PeerOutcome[] = [];
  const ready: { peer: Peer; serverInfo: string; rows: RowState[] }[] = [];
  for (const peer of peers) {
    const base = { peer: peer.name, server: peer.server, keeps: peer.keeps };
    if (!(await peer.available())) {
      progress(`peers: ${peer.name} skipped: ${peer.server} did not answer`);
      outcomes.push({ ...base, skipped: `${peer.server} did not answer`, rows: [] });
      continue;
    }
    try {
      const serverInfo = await peer.setup();
      progress(`peers: ${peer.name} on ${serverInfo}`);
      ready.push({ peer, serverInfo, rows: peer.settings.map((setting) => ({ setting, runs: [], maxLeft: 0 })) });
    } catch (error) {
      progress(`peers: ${peer.name} skipped: setup failed: ${message(error)}`);
      outcomes.push({ ...base, skipped: `setup failed: ${message(error)}`, rows: [] });
      await peer.teardown().catch(() => undefined);
    }
  }
  try {
    for (let round = 1; round <= rounds; round++)
      for (const { peer, rows } of ready) for (const row of rows) await drainRound(peer, row, jobs, round, rounds);
    for (const { peer, rows } of ready) for (const row of rows) await measureLatency(peer, row, latencySamples);
  } finally {
    for (const { peer } of ready)
      await peer.teardown().catch((error) => progress(`peers: ${peer.name} teardown failed: ${message(error)}`));
  }
  for (const { peer, serverInfo, rows } of ready)
    outcomes.push({ peer: peer.name, server: peer.server, keeps: peer.keeps, serverInfo, rows: rows.map(toRow) });
  outcomes.sort((a, b) => peers.findIndex((p) => p.name === a.peer) - peers.findIndex((p) => p.name === b.peer));
  return {
    jobCount,
    payloadBytes: `${Math.min(...sizes)}–${Math.max(...sizes)}`,
    rounds,
    latencySamples,
    peers: outcomes,
    wallSeconds: (performance.now() - started) / 1000,
    loadAtStart,
    loadAtEnd: loadavg()[0] ?? 0,
  };
}

/** One row while it is measured. */
interface RowState {
  readonly setting: PeerSetting;
  readonly runs: number[];
  maxLeft: number;
  latencyMs?: Latency;
  delayedMs?: Latency;
  error?: string;
}

const labelOf = (peer: Peer, s: PeerSetting) => `${peer.name} ${s.setting} c${s.concurrency}`;
const limitOf = (s: PeerSetting) => Math.min(s.limitSeconds ?? PEER_DRAIN_LIMIT_SECONDS, PEER_DRAIN_LIMIT_SECONDS);

async function drainRound(peer: Peer, row: RowState, jobs: ReturnType<typeof makeJobs>, round: number, rounds: number) {
  if (row.error) return;
  const limitSeconds = limitOf(row.setting);
  try {
    await peer.clear();
    const enqueueSeconds = await peer.enqueue(jobs);
    const drain = await peer.drain(row.setting, limitSeconds * 1000);
    row.runs.push(drain.jobsPerSec);
    row.maxLeft = Math.max(row.maxLeft, drain.left);
    progress(
      `peers: ${labelOf(peer, row.setting)} round ${round}/${rounds}: enqueue ${enqueueSeconds.toFixed(1)} s, drain ${fmt(drain.jobsPerSec)} jobs/s${drain.left > 0 ? ` (cut off at ${limitSeconds} s, ${fmt(drain.left)} left)` : ''}`,
    );
  } catch (error) {
    progress(`peers: ${labelOf(peer, row.setting)} failed: ${message(error)}`);
    row.error = message(error);
    await peer.clear().catch(() => undefined);
  }
}

async function measureLatency(peer: Peer, row: RowState, samples: number) {
  if (row.error) return;
  try {
    for (const delayed of [false, true]) {
      await peer.clear();
      const l = percentiles(await peer.pickupLatency(row.setting, samples, delayed));
      if (delayed) row.delayedMs = l;
      else row.latencyMs = l;
      const what = delayed ? 'delayed start' : 'pickup latency';
      progress(`peers: ${labelOf(peer, row.setting)} ${what} p50 ${ms(l.p50)} p90 ${ms(l.p90)} p99 ${ms(l.p99)}`);
    }
  } catch (error) {
    progress(`peers: ${labelOf(peer, row.setting)} latency failed: ${message(error)}`);
    row.error = message(error);
    await peer.clear().catch(() => undefined);
  }
}

function toRow(r: RowState): PeerRow {
  const base = { setting: r.setting.setting, concurrency: r.setting.concurrency, describe: r.setting.describe };
  if (r.error) return { ...base, jobsPerSec: null, runs: r.runs, latencyMs: null, delayedMs: null, error: r.error };
  const cutOff = r.maxLeft > 0 ? { cutOff: { seconds: limitOf(r.setting), left: r.maxLeft } } : {};
  const latencies = { latencyMs: r.latencyMs ?? null, delayedMs: r.delayedMs ?? null };
  return { ...base, jobsPerSec: median(r.runs), runs: r.runs, ...cutOff, ...latencies };
}

/** Nearest-rank percentiles (with 30 samples, p99 is the largest). */
export function percentiles(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
  return { p50: at(50), p90: at(90), p99: at(99), samples: sorted.length };
}

export function renderPeerReport(report: PeerReport): string {
  const rows = report.peers.flatMap((p) =>
    p.rows.map((r) => [
      p.peer,
      r.setting,
      String(r.concurrency),
      r.jobsPerSec === null ? 'failed' : fmt(r.jobsPerSec),
      r.runs.map(fmt).join(' / '),
      spread(r.latencyMs),
      spread(r.delayedMs),
      p.keeps,
      r.error ?? (r.cutOff ? `cut off at ${r.cutOff.seconds} s (≤ ${fmt(r.cutOff.left)} left)` : ''),
    ]),
  );
  const skipped = report.peers.filter((p) => p.skipped).map((p) => `    ${p.peer}: skipped, ${p.skipped}`);
  const settings = report.peers.flatMap((p) =>
    p.rows.map((r) => `    ${p.peer} ${r.setting} c${r.concurrency}: ${r.describe}`),
  );
  const servers = report.peers.filter((p) => p.serverInfo).map((p) => `    ${p.peer}: ${p.serverInfo}`);
  return [
    `(d) peers: drain ${fmt(report.jobCount)} no-op jobs (payload ${report.payloadBytes} bytes of JSON, enqueued in bulk before timing) with 1 consumer process; median of ${report.rounds} rounds (interleaved: round 1 of every row, then round 2, …); pickup latency of ${report.latencySamples} jobs enqueued one by one 100–300 ms apart into an idle consumer, from the enqueue call to the handler's start; delayed start of ${report.latencySamples} jobs enqueued the same way, each due 300–700 ms later, from its due time to the handler's start (p50 / p90 / p99 ms, nearest rank)`,
    ...(rows.length > 0
      ? [
          table(
            [
              'peer',
              'setting',
              'concurrency',
              'jobs/s',
              'runs',
              'pickup ms p50 / p90 / p99',
              'delayed start ms',
              'keeps',
              'note',
            ],
            rows,
          ),
        ]
      : []),
    ...skipped,
    '    settings:',
    ...settings,
    '    servers:',
    ...servers,
    renderPeerVerdict(peerVerdict(report)),
    `    peers wall time ${report.wallSeconds.toFixed(0)} s; load average ${report.loadAtStart.toFixed(2)} at start, ${report.loadAtEnd.toFixed(2)} at end`,
  ].join('\n');
}

/** The report as plain data for the closing JSON line: rates rounded to jobs/s, latencies to 0.1 ms. */
export function toPeerResult(report: PeerReport) {
  return {
    jobCount: report.jobCount,
    rounds: report.rounds,
    latencySamples: report.latencySamples,
    wallSeconds: Math.round(report.wallSeconds),
    verdict: peerVerdict(report),
    peers: report.peers.map((p) => ({
      peer: p.peer,
      server: p.serverInfo ?? p.server,
      keeps: p.keeps,
      ...(p.skipped ? { skipped: p.skipped } : {}),
      rows: p.rows.map((r) => ({
        setting: r.setting,
        concurrency: r.concurrency,
        settings: r.describe,
        jobsPerSec: r.jobsPerSec === null ? null : Math.round(r.jobsPerSec),
        runs: r.runs.map(Math.round),
        ...(r.cutOff ? { cutOff: r.cutOff } : {}),
        latencyMs: rounded(r.latencyMs),
        delayedMs: rounded(r.delayedMs),
        ...(r.error ? { error: r.error } : {}),
      })),
    })),
  };
}

function ms(n: number): string {
  return n.toFixed(1);
}

function spread(l: Latency | null): string {
  return l ? `${ms(l.p50)} / ${ms(l.p90)} / ${ms(l.p99)}` : '';
}

function rounded(l: Latency | null) {
  return l && { p50: round1(l.p50), p90: round1(l.p90), p99: round1(l.p99) };
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function main(): Promise<void> {
  const report = await measurePeers();
  const result = toPeerResult(report);
  process.stdout.write(`${renderPeerReport(report)}\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(`${RESULTS_DIR}peers.json`, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (isMain(import.meta.url)) await main();
