/**
 * The grid's report: the drain table with the verdict per cell (sluice ÷ the best peer, where
 * BullMQ counts by its production row, AOF fsynced every second, when that row was measured), each
 * system's durability beside it, what a drained job costs the server for sluice and the raw loop,
 * what it costs every system in CPU (client and server, with why sluice trails where it does),
 * the bulk and single-job enqueues against their raw ceilings, and pickup latency; and the same as
 * plain data for the closing JSON line. Rates are whole jobs/s, ratios two decimals.
 */
import type { EnqueueMeasurement } from './enqueue.ts';
import { type CellResult, type CellRun, cellLabel, type GridSize, WARM_SHARE } from './grid.ts';
import { cpuTable } from './gridCpuReport.ts';
import type { LatencyRow } from './gridLatency.ts';
import type { SystemInfo, SystemKey } from './gridSystems.ts';
import { COLUMNS, cellVerdict, cellVerdictFromGo, PEER_NAMES } from './gridVerdict.ts';
import { type InMemoryRow, inMemoryTable } from './inMemoryPayloads.ts';
import { fmt, table } from './report.ts';
import type { ServerCost } from './serverCounters.ts';
import type { SingleEnqueueRow } from './singleEnqueue.ts';
import { singleTable } from './singleEnqueueReport.ts';
import type { PayloadKind } from './workload.ts';

export interface BulkEnqueueRow {
  readonly payload: PayloadKind;
  readonly jobs: number;
  /** JSON bytes of the batch's payloads: the same sizes as the grid's drains of that payload. */
  readonly bytes: { readonly min: number; readonly mean: number; readonly max: number };
  readonly measurement: EnqueueMeasurement;
}

export interface GridReportInput {
  readonly header: string;
  readonly size: GridSize;
  readonly quick: boolean;
  readonly systems: readonly SystemInfo[];
  readonly cells: readonly CellResult[];
  readonly bulk: readonly BulkEnqueueRow[];
  readonly single: readonly SingleEnqueueRow[];
  readonly latency: readonly LatencyRow[];
  /** The seed004 cells drained again with their payloads in memory (inMemoryPayloads.ts); [] when not run. */
  readonly inMemory: readonly InMemoryRow[];
  readonly wallSeconds: number;
  readonly loadAtStart: number;
  readonly loadAtEnd: number;
}

export function renderGridReport(input: GridReportInput): string {
  return [
    input.header,
    '',
    durabilityLines(input.systems),
    '',
    drainTable(input),
    '',
    costTable(input.cells),
    '',
    cpuTable(input.cells),
    '',
    ...(input.inMemory.length > 0 ? [inMemoryTable(input.inMemory), ''] : []),
    bulkTable(input.bulk),
    '',
    singleTable(input.single, input.systems),
    '',
    latencyTable(input),
    '',
    settingLines(input),
    `wall time ${input.wallSeconds.toFixed(0)} s; load average ${input.loadAtStart.toFixed(2)} at start, ${input.loadAtEnd.toFixed(2)} at end${input.quick ? '; --quick: a tiny run for development, not figures' : ''}`,
  ].join('\n');
}

function durabilityLines(systems: readonly SystemInfo[]): string {
  const lines = systems.map((s) =>
    s.skipped
      ? `    ${s.name}: skipped, ${s.skipped}`
      : `    ${s.name}: ${s.durability}; keeps ${s.keeps}; ${s.serverInfo}`,
  );
  return ['durability (what an acknowledged job survives) and servers:', ...lines].join('\n');
}

function drainTable({ cells, size }: GridReportInput): string {
  const rows = cells.map(({ cell, runs, targetSeconds, limitSeconds }) => {
    const v = cellVerdict(runs);
    const fromGo = cellVerdictFromGo(runs);
    const cellsOf = COLUMNS.map(({ key }) => rateCell(runs.find((r) => r.system === key)));
    const ratio = v.ratio === null ? '' : `${v.ratio.toFixed(2)} vs ${PEER_NAMES[v.bestPeer ?? 'pgBoss']}`;
    return [
      cellLabel(cell),
      ...cellsOf,
      ratio,
      v.ratio === null ? '' : v.ratio >= 1 ? 'yes' : 'no',
      fromGo.ratio?.toFixed(2) ?? '',
      v.ratioToAnyPeer?.toFixed(2) ?? '',
      v.ratioToRaw?.toFixed(2) ?? '',
      `${targetSeconds.toFixed(1)} / ${limitSeconds.toFixed(1)}`,
    ];
  });
  return [
    `drain grid, jobs/s: payload × processes × concurrency per process; each drain sized to the target from the system's previous drain and enqueue rates (${fmt(size.minJobs)}–${fmt(size.maxJobs.small)} small jobs, up to ${fmt(size.maxJobs.seed004)} seed004 or records), timed once the first ${WARM_SHARE * 100} % of its jobs are drained (every system's warm-up; "from 'go'": the same verdict over the whole drain, whose rates are in the JSON line, jobsPerSecFromGo), cut off at the limit (* = rate over the cut-off window); target / limit ${size.targetSeconds} / ${size.limitSeconds} s, shortened for later cells when the grid would pass its ${size.budgetSeconds} s budget; one round per cell`,
    table(
      [
        'cell',
        ...COLUMNS.map((c) => c.head),
        'sluice ÷ best peer',
        '≥ 1.0',
        "from 'go'",
        '÷ any peer row',
        'sluice ÷ raw',
      ],
      rows,
    ),
    "    small: {n, email}, ~40 B of JSON; seed004: sizes uniform in 0–16 KB (mean ~8 KB) from a fixed seed; records: order lines of random values at seed004's sizes (deflate ~2.5x, ~90 % over 1 KiB either way)",
    '    best peer: BullMQ by its AOF row (production persistence), pg-boss at its best; "÷ any peer row" counts BullMQ without persistence too',
  ].join('\n');
}

function rateCell(run: CellRun | undefined): string {
  if (!run) return '—';
  if (run.jobsPerSec === null) return 'failed';
  return `${fmt(run.jobsPerSec)}${run.left > 0 ? '*' : ''}`;
}

function costTable(cells: readonly CellResult[]): string {
  const rows = cells.flatMap(({ cell, runs }) =>
    runs
      .filter((r) => r.cost)
      .map((r) => {
        const c = r.cost as ServerCost;
        const mix = ['select', 'insert', 'update', 'delete', 'begin', 'commit'].map((k) =>
          (c.statements[k] ?? 0).toFixed(2),
        );
        return [
          cellLabel(cell),
          r.system,
          c.questions.toFixed(2),
          ...mix,
          c.redoFlushes.toFixed(3),
          c.dataFsyncs.toFixed(3),
          (c.redoBytes / 1024).toFixed(2),
          c.pagesWritten.toFixed(3),
          c.pagesRead.toFixed(3),
          c.serverCpuUs === null ? '' : c.serverCpuUs.toFixed(1),
          c.connectionCpuUs === null ? '' : c.connectionCpuUs.toFixed(1),
        ];
      }),
  );
  const counter = cells.flatMap((c) => c.runs).find((r) => r.cost)?.cost?.redoCounter ?? 'Innodb_log_writes';
  return [
    'server cost per drained job, sluice and the raw loop (SHOW GLOBAL STATUS deltas over the timed window ÷ jobs drained in it; server CPU from /proc: the whole mariadbd/mysqld process, and the threads of the bench database connections)',
    table(
      [
        'cell',
        'side',
        'Questions',
        'select',
        'insert',
        'update',
        'delete',
        'begin',
        'commit',
        `redo (${counter})`,
        'fsyncs',
        'redo KB',
        'pages written',
        'pages read',
        'server CPU µs',
        'conn CPU µs',
      ],
      rows,
    ),
  ].join('\n');
}

function bulkTable(rows: readonly BulkEnqueueRow[]): string {
  return [
    'bulk enqueue: one batch in one transaction, sluice.enqueueBatch vs raw multi-row INSERTs of the same rows (median of runs)',
    table(
      ['payload', 'JSON bytes min / mean / max', 'jobs', 'sluice jobs/s', 'raw jobs/s', 'sluice ÷ raw'],
      rows.map((r) => [
        r.payload,
        `${fmt(r.bytes.min)} / ${fmt(r.bytes.mean)} / ${fmt(r.bytes.max)}`,
        fmt(r.jobs),
        fmt(r.measurement.jobsPerSec),
        fmt(r.measurement.rawJobsPerSec),
        r.measurement.ratio.toFixed(2),
      ]),
    ),
  ].join('\n');
}

function latencyTable({ latency, systems }: GridReportInput): string {
  const nameOf = (key: SystemKey) => systems.find((s) => s.key === key)?.name ?? key;
  return [
    'pickup latency: one idle consumer process at concurrency 50, jobs enqueued one by one 100–300 ms apart, enqueue call to handler start (ms, nearest rank)',
    table(
      ['system', 'p50', 'p90', 'p99', 'samples'],
      latency.map((l) =>
        l.latencyMs
          ? [
              nameOf(l.system),
              ms(l.latencyMs.p50),
              ms(l.latencyMs.p90),
              ms(l.latencyMs.p99),
              String(l.latencyMs.samples),
            ]
          : [nameOf(l.system), 'failed', '', '', l.error ?? ''],
      ),
    ),
  ].join('\n');
}

function settingLines({ cells }: GridReportInput): string {
  const first = cells[0]?.runs ?? [];
  return [
    'settings (first cell; every cell sets its own processes and concurrency):',
    ...first.map((r) => `    ${r.system}: ${r.describe}`),
  ].join('\n');
}

function ms(n: number): string {
  return n.toFixed(1);
}
