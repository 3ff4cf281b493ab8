/**
 * `npm run bench -- compare A B`: two runs of `npm run bench` (each a results JSON file, or a saved
 * stdout whose last JSON line is the result) side by side, cell by cell: every rate of A and of B
 * and B ÷ A, and for the metered systems (sluice and the raw loop) the server's statements and redo
 * flushes per job. For a before/after of one change, run both on the same machine close together
 * (absolute rates on a shared machine drift by a fifth between runs: the ratios within each run,
 * sluice ÷ raw, are what to compare).
 */
import { readFileSync } from 'node:fs';
import { table } from './report.ts';

interface Cost {
  readonly questions: number;
  readonly redoFlushes: number;
  readonly statements?: Readonly<Record<string, number>>;
}

interface Run {
  readonly grid?: readonly {
    payload: string;
    processes: number;
    concurrency: number;
    jobsPerSec: Record<string, number | null>;
    cost?: Record<string, Cost>;
  }[];
  readonly bulkEnqueue?: readonly { payload: string; jobsPerSec: number; rawJobsPerSec: number; ratio: number }[];
  readonly singleEnqueue?: readonly { system: string; workers: number; jobsPerSec: number | null; cost?: Cost }[];
  readonly pickupMs?: readonly { system: string; p50?: number; p90?: number }[];
}

/** A results file: the whole file as JSON, else its last line that parses as a JSON object. */
export function readRun(path: string): Run {
  const text = readFileSync(path, 'utf8');
  try {
    return JSON.parse(text) as Run;
  } catch {
    const line = text
      .split('\n')
      .reverse()
      .find((l) => l.trim().startsWith('{'));
    if (!line) throw new Error(`${path}: no JSON result in it (a results/*.json file, or the bench's stdout)`);
    return JSON.parse(line) as Run;
  }
}

const rate = (n: number | null | undefined) =>
  n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US');
const ratio = (a: number | null | undefined, b: number | null | undefined) => (a && b ? (b / a).toFixed(2) : '');
const perJob = (c: Cost | undefined) => (c ? `${c.questions.toFixed(2)} / ${c.redoFlushes.toFixed(2)}` : '');

function gridTable(a: Run, b: Run): string {
  const rows: string[][] = [];
  for (const cell of b.grid ?? []) {
    const before = a.grid?.find(
      (c) => c.payload === cell.payload && c.processes === cell.processes && c.concurrency === cell.concurrency,
    );
    if (!before) continue;
    for (const [system, after] of Object.entries(cell.jobsPerSec)) {
      const was = before.jobsPerSec[system];
      rows.push([
        `${cell.payload} ×${cell.processes} c${cell.concurrency}`,
        system,
        rate(was),
        rate(after),
        ratio(was, after),
        perJob(before.cost?.[system]),
        perJob(cell.cost?.[system]),
      ]);
    }
  }
  return [
    'drain grid, jobs/s (statements / redo flushes per job for the metered systems)',
    table(['cell', 'system', 'A', 'B', 'B ÷ A', 'A per job', 'B per job'], rows),
  ].join('\n');
}

function bulkTable(a: Run, b: Run): string {
  const rows = (b.bulkEnqueue ?? []).flatMap((after) => {
    const before = a.bulkEnqueue?.find((x) => x.payload === after.payload);
    if (!before) return [];
    return [
      [
        after.payload,
        rate(before.jobsPerSec),
        rate(after.jobsPerSec),
        ratio(before.jobsPerSec, after.jobsPerSec),
        before.ratio.toFixed(2),
        after.ratio.toFixed(2),
      ],
    ];
  });
  return [
    'bulk enqueue, sluice jobs/s and sluice ÷ raw within each run',
    table(['payload', 'A', 'B', 'B ÷ A', 'A sluice ÷ raw', 'B sluice ÷ raw'], rows),
  ].join('\n');
}

function singleTable(a: Run, b: Run): string {
  const rawOf = (run: Run, workers: number) =>
    run.singleEnqueue?.find((s) => s.system === 'raw' && s.workers === workers)?.jobsPerSec ?? null;
  const rows = (b.singleEnqueue ?? []).flatMap((after) => {
    const before = a.singleEnqueue?.find((s) => s.system === after.system && s.workers === after.workers);
    if (!before) return [];
    return [
      [
        after.system,
        String(after.workers),
        rate(before.jobsPerSec),
        rate(after.jobsPerSec),
        ratio(before.jobsPerSec, after.jobsPerSec),
        ratio(rawOf(a, after.workers), before.jobsPerSec),
        ratio(rawOf(b, after.workers), after.jobsPerSec),
        perJob(before.cost),
        perJob(after.cost),
      ],
    ];
  });
  return [
    'single-job enqueue, jobs/s by consumers draining meanwhile; ÷ raw INSERT within each run; statements / redo flushes per job',
    table(['system', 'draining', 'A', 'B', 'B ÷ A', 'A ÷ raw', 'B ÷ raw', 'A per job', 'B per job'], rows),
  ].join('\n');
}

function pickupTable(a: Run, b: Run): string {
  const rows = (b.pickupMs ?? []).flatMap((after) => {
    const before = a.pickupMs?.find((p) => p.system === after.system);
    if (!before) return [];
    const ms = (n: number | undefined) => (n === undefined ? '—' : n.toFixed(1));
    return [[after.system, ms(before.p50), ms(after.p50), ms(before.p90), ms(after.p90)]];
  });
  return ['pickup latency, ms', table(['system', 'A p50', 'B p50', 'A p90', 'B p90'], rows)].join('\n');
}

export function renderComparison(a: Run, b: Run): string {
  return [gridTable(a, b), '', bulkTable(a, b), '', singleTable(a, b), '', pickupTable(a, b)].join('\n');
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [first, second] = process.argv.slice(2);
  if (!first || !second) {
    process.stderr.write('usage: npm run bench -- compare A.json B.json (results files, or saved bench stdout)\n');
    process.exit(2);
  }
  process.stdout.write(`A: ${first}\nB: ${second}\n\n${renderComparison(readRun(first), readRun(second))}\n`);
}
