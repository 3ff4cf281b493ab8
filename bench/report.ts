/**
 * The report: a readable table of what the run measured, and the result object that ends it as
 * one JSON line. Rates are rounded to whole jobs/s, ratios (sluice / raw, computed before
 * rounding) to two decimals.
 */
import { cpus } from 'node:os';
import { redactUrl } from '../src/db/redactUrl.ts';
import type { Bench } from './benchDatabase.ts';
import type { BacklogMeasurement } from './delayedBacklog.ts';
import type { DrainMeasurement } from './drain.ts';
import type { DrainRow } from './drainSuite.ts';
import { RAW_BATCH } from './drainSuite.ts';
import type { EnqueueMeasurement } from './enqueue.ts';

export interface BenchResult {
  readonly enqueue: { readonly jobsPerSec: number; readonly rawJobsPerSec: number; readonly ratio: number };
  readonly drain: readonly {
    readonly strategy: string;
    readonly workers: number;
    readonly concurrency: number;
    readonly jobsPerSec: number;
    readonly rawJobsPerSec: number;
    readonly ratio: number;
  }[];
  /** The bar: the best sluice drain against the best raw drain of the run, and against its own paired raw drain. */
  readonly bestDrain: {
    readonly strategy: string;
    readonly workers: number;
    readonly concurrency: number;
    readonly jobsPerSec: number;
    readonly bestRawJobsPerSec: number;
    readonly ratioToBestRaw: number;
    readonly ratioToPairedRaw: number;
  };
  readonly delayedBacklog: {
    readonly dueJobs: number;
    readonly delayedJobs: number;
    readonly jobsPerSecWithout: number;
    readonly jobsPerSecWith: number;
    readonly ratio: number;
    readonly runsWithout: readonly number[];
    readonly runsWith: readonly number[];
    readonly firstAfterLoad: number;
  };
}

export function toResult(
  enqueue: EnqueueMeasurement,
  drains: readonly DrainRow[],
  backlog: BacklogMeasurement,
): BenchResult {
  return {
    enqueue: {
      jobsPerSec: Math.round(enqueue.jobsPerSec),
      rawJobsPerSec: Math.round(enqueue.rawJobsPerSec),
      ratio: round2(enqueue.ratio),
    },
    drain: drains.map((d) => ({
      strategy: d.strategy,
      workers: d.workers,
      concurrency: d.concurrency,
      jobsPerSec: Math.round(d.sluice.jobsPerSec),
      rawJobsPerSec: Math.round(d.raw.jobsPerSec),
      ratio: round2(d.sluice.jobsPerSec / d.raw.jobsPerSec),
    })),
    bestDrain: bestDrain(drains),
    delayedBacklog: {
      dueJobs: backlog.dueJobs,
      delayedJobs: backlog.delayedJobs,
      jobsPerSecWithout: Math.round(backlog.jobsPerSecWithout),
      jobsPerSecWith: Math.round(backlog.jobsPerSecWith),
      ratio: round2(backlog.ratio),
      runsWithout: backlog.runsWithout.map(Math.round),
      runsWith: backlog.runsWith.map(Math.round),
      firstAfterLoad: Math.round(backlog.firstAfterLoad),
    },
  };
}

function bestDrain(drains: readonly DrainRow[]): BenchResult['bestDrain'] {
  const best = drains.reduce((a, b) => (b.sluice.jobsPerSec > a.sluice.jobsPerSec ? b : a));
  const bestRaw = Math.max(...drains.map((d) => d.raw.jobsPerSec));
  return {
    strategy: best.strategy,
    workers: best.workers,
    concurrency: best.concurrency,
    jobsPerSec: Math.round(best.sluice.jobsPerSec),
    bestRawJobsPerSec: Math.round(bestRaw),
    ratioToBestRaw: round2(best.sluice.jobsPerSec / bestRaw),
    ratioToPairedRaw: round2(best.sluice.jobsPerSec / best.raw.jobsPerSec),
  };
}

export interface ReportInput {
  readonly bench: Bench;
  readonly jobCount: number;
  readonly loadAtStart: number;
  readonly enqueue: EnqueueMeasurement;
  readonly drains: readonly DrainRow[];
  readonly backlog: BacklogMeasurement;
  readonly wallSeconds: number;
}

export function renderReport(input: ReportInput): string {
  return [
    header(input),
    '',
    enqueueTable(input),
    '',
    drainTable(input),
    '',
    statementMix(input.drains),
    '',
    backlogTable(input.backlog),
    '',
    footer(input),
  ].join('\n');
}

function backlogTable(b: BacklogMeasurement): string {
  return [
    `(c) drain ${fmt(b.dueJobs)} due jobs (1 worker, concurrency 50) with and without ${fmt(b.delayedJobs)} delayed jobs in the same queue`,
    `    without backlog ${fmt(b.jobsPerSecWithout)} jobs/s   with backlog ${fmt(b.jobsPerSecWith)} jobs/s   ratio ${b.ratio.toFixed(2)}   (medians)`,
    `    timed runs without: ${b.runsWithout.map(fmt).join(' / ')}   with: ${b.runsWith.map(fmt).join(' / ')}`,
    `    first drain right after writing the backlog (untimed warm-up; InnoDB still flushing the load): ${fmt(b.firstAfterLoad)} jobs/s`,
  ].join('\n');
}

function header({ bench, loadAtStart }: ReportInput): string {
  const packetMiB = (bench.server.maxAllowedPacket / 1024 / 1024).toFixed(1);
  return [
    `sluice bench  server ${bench.server.version}  max_allowed_packet ${bench.server.maxAllowedPacket} (${packetMiB} MiB)`,
    `              ${redactUrl(bench.url)}  node ${process.version}  ${cpus().length} CPUs  load average at start ${loadAtStart.toFixed(2)}`,
  ].join('\n');
}

function enqueueTable({ jobCount, enqueue: e }: ReportInput): string {
  const runs = (seconds: readonly number[]) => seconds.map((s) => s.toFixed(2)).join(' / ');
  return [
    `(a) enqueue one batch of ${fmt(jobCount)} jobs, one transaction, ${fmt(e.rowsPerStatement)} rows x ${e.statements} INSERTs (median of ${e.sluiceSeconds.length})`,
    table(
      ['side', 'runs (s)', 'jobs/s'],
      [
        ['sluice.enqueueBatch', runs(e.sluiceSeconds), fmt(e.jobsPerSec)],
        ['raw mysql2 INSERT … VALUES ?', runs(e.rawSeconds), fmt(e.rawJobsPerSec)],
      ],
    ),
    `    ratio sluice/raw ${e.ratio.toFixed(2)}`,
  ].join('\n');
}

function drainTable({ jobCount, drains }: ReportInput): string {
  const rows = drains.map((d) => [
    d.strategy,
    String(d.workers),
    String(d.concurrency),
    fmt(d.sluice.jobsPerSec),
    fmt(d.raw.jobsPerSec),
    (d.sluice.jobsPerSec / d.raw.jobsPerSec).toFixed(2),
    statementsPer50(d.sluice).toFixed(1),
    statementsPer50(d.raw).toFixed(1),
    `${fmt(d.sluice.startedEarly)} / ${fmt(d.raw.startedEarly)}`,
    [cutOff('sluice', d.sluice), cutOff('raw', d.raw)].filter(Boolean).join('; '),
  ]);
  return [
    `(b) drain ${fmt(jobCount)} no-op jobs: sluice work (claims of up to <concurrency> jobs, job history on) vs raw claim-and-delete loop (${RAW_BATCH} per claim, no history)`,
    table(
      [
        'strategy',
        'workers',
        'concurrency',
        'jobs/s',
        'raw jobs/s',
        'ratio',
        'stmts/50 jobs',
        'raw stmts/50',
        'done before timing (sluice / raw)',
        'note',
      ],
      rows,
    ),
    barLine(bestDrain(drains)),
  ].join('\n');
}

function barLine(b: BenchResult['bestDrain']): string {
  return `    best sluice drain ${fmt(b.jobsPerSec)} jobs/s (${b.strategy} ×${b.workers} c${b.concurrency}): ${b.ratioToBestRaw.toFixed(2)}× the best raw drain of this run (${fmt(b.bestRawJobsPerSec)}), ${b.ratioToPairedRaw.toFixed(2)}× its own paired raw drain`;
}

/** Statements per 50 jobs by first keyword, start-up statements included. */
function statementMix(drains: readonly DrainRow[]): string {
  const mix = (m: DrainMeasurement) =>
    Object.entries(m.statements)
      .sort(([, a], [, b]) => b - a)
      .map(([kind, n]) => `${kind} ${((n * 50) / processed(m)).toFixed(2)}`)
      .join(', ');
  const lines = drains.map(
    (d) => `    ${d.strategy} ×${d.workers} c${d.concurrency}: sluice ${mix(d.sluice)}  |  raw ${mix(d.raw)}`,
  );
  return ['statements per 50 jobs, by kind (client-side count, both sides):', ...lines].join('\n');
}

function footer({ wallSeconds }: ReportInput): string {
  return `wall time ${wallSeconds.toFixed(0)} s`;
}

/** Statements per 50 jobs processed (start-up included; a cut-off drain counts what it did). */
export function statementsPer50(m: DrainMeasurement): number {
  const total = Object.values(m.statements).reduce((a, b) => a + b, 0);
  return (total * 50) / processed(m);
}

function processed(m: DrainMeasurement): number {
  return m.startedEarly + m.jobs;
}

function cutOff(side: string, m: DrainMeasurement): string {
  return m.left > 0 ? `${side} cut off after ${m.seconds.toFixed(0)} s, ${fmt(m.left)} left` : '';
}

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `    ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')}`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
