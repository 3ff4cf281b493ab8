/**
 * `npm run bench [-- --quick]`: sluice beside its peers and its raw-SQL ceilings, in one run on one
 * machine (grid.ts):
 *   - the drain grid: processes {1, 4} × concurrency {10, 50, 500} × payload {~40 B, seed004's
 *     0–16 KB, application records of the same sizes}, for sluice at its defaults, BullMQ without persistence and with AOF fsynced every
 *     second, pg-boss at its best and the raw claim loop, with the verdict per cell and, for sluice
 *     and the raw loop, the server's statements, redo writes, fsyncs and CPU per job;
 *   - bulk enqueue of one batch against raw multi-row INSERTs (enqueue.ts), every payload;
 *   - single-job enqueue by 8 producer processes per system, against a raw autocommit INSERT,
 *     idle and while consumers drain (singleEnqueue.ts);
 *   - pickup latency into an idle consumer (gridLatency.ts);
 *   - the seed004 cells drained again by sluice and the raw loop with a buffer pool that holds
 *     their payloads, set back after (inMemoryPayloads.ts): how much of those cells is
 *     the disk.
 * About 20–27 minutes on a quiet 2-core machine. `--quick` (or BENCH_QUICK=1) runs two cells of a
 * few hundred jobs and short probes, for development; `--cells` keeps only the cells it names
 * (pickCells) and runs the grid alone (no enqueue or latency sections; the in-memory re-drain of a seed004 cell it names still runs), with `--jobs N` every drain N jobs, `--systems` only the systems
 * it names (pickSystems), for timing one cell against one peer. Either prints the same report and writes bench/results/partial.json, never RESULTS.md.
 * Progress goes to stderr; stdout gets the report and, as its last line, the result as JSON, also
 * written to bench/results/latest.json (kept out of git). The same report goes to bench/RESULTS.md,
 * which the README links and which is committed after a run: the figures in the repository are the
 * ones a run printed, never typed in by hand. Not a test: it asserts only that every step did its
 * work. Whatever happens, the local Redis gets its persistence settings back.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { redactUrl } from '../src/db/redactUrl.ts';
import { type Bench, openBench } from './benchDatabase.ts';
import { measureEnqueue } from './enqueue.ts';
import { FULL_GRID, type GridSize, measureGrid, QUICK_GRID } from './grid.ts';
import { measureGridLatency } from './gridLatency.ts';
import { type BulkEnqueueRow, renderGridReport } from './gridReport.ts';
import { toGridResult } from './gridResult.ts';
import { type GridSystem, gridSystems, setUpSystems } from './gridSystems.ts';
import { measureInMemoryPayloads } from './inMemoryPayloads.ts';
import { restoreRedisPersistence } from './peers/redisPersistence.ts';
import { progress } from './progress.ts';
import { measureSingleEnqueue } from './singleEnqueue.ts';
import { makeJobs, PAYLOAD_KINDS, type PayloadKind, payloadBytes } from './workload.ts';

const RESULTS_DIR = fileURLToPath(new URL('./results/', import.meta.url));
const RESULTS_PAGE = fileURLToPath(new URL('./RESULTS.md', import.meta.url));

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    cells: { type: 'string' },
    systems: { type: 'string' },
    jobs: { type: 'string' },
  },
});
const quick = args.quick || process.env.BENCH_QUICK === '1';

/** Jobs of one bulk-enqueue batch and the runs per side, by payload. */
const BULK: Record<PayloadKind, { jobs: number; runs: number }> = quick
  ? { small: { jobs: 2_000, runs: 1 }, seed004: { jobs: 500, runs: 1 }, records: { jobs: 500, runs: 1 } }
  : { small: { jobs: 100_000, runs: 3 }, seed004: { jobs: 10_000, runs: 3 }, records: { jobs: 10_000, runs: 3 } };
const SINGLE_ENQUEUE_SECONDS = quick ? 1 : 4;
const LATENCY_SAMPLES = quick ? 5 : 30;

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadavg()[0] ?? 0;
  const size = pickCells(quick ? QUICK_GRID : FULL_GRID, args.cells, args.jobs);
  const bench = await openBench();
  try {
    progress(
      `database ready: ${bench.server.version}, max_allowed_packet ${bench.server.maxAllowedPacket}${quick ? ' (--quick)' : ''}`,
    );
    const gridOnly = args.cells !== undefined;
    const bulk = gridOnly ? [] : await measureBulk(bench);
    const { ready, info } = await setUpSystems(pickSystems(gridSystems(bench), args.systems));
    let single: Awaited<ReturnType<typeof measureSingleEnqueue>> = [];
    let cells: Awaited<ReturnType<typeof measureGrid>> = [];
    let latency: Awaited<ReturnType<typeof measureGridLatency>> = [];
    let inMemory: Awaited<ReturnType<typeof measureInMemoryPayloads>> = [];
    try {
      if (!gridOnly) single = await measureSingleEnqueue(bench, ready, SINGLE_ENQUEUE_SECONDS);
      cells = await measureGrid(bench, ready, size);
      if (!quick) inMemory = await measureInMemoryPayloads(bench, ready, cells, size);
      if (!gridOnly) latency = await measureGridLatency(ready, LATENCY_SAMPLES);
    } finally {
      for (const system of ready)
        await system.peer.teardown().catch((error) => progress(`${system.peer.name} teardown failed: ${error}`));
    }
    const input = {
      header: header(bench, loadAtStart),
      size,
      quick,
      systems: info,
      cells,
      bulk,
      single,
      latency,
      inMemory,
      wallSeconds: (performance.now() - started) / 1000,
      loadAtStart,
      loadAtEnd: loadavg()[0] ?? 0,
    };
    const report = renderGridReport(input);
    const result = toGridResult(input);
    process.stdout.write(`${report}\n`);
    mkdirSync(RESULTS_DIR, { recursive: true });
    const partial = quick || gridOnly || args.systems !== undefined;
    writeFileSync(`${RESULTS_DIR}${partial ? 'partial' : 'latest'}.json`, `${JSON.stringify(result, null, 2)}\n`);
    if (!partial) writeFileSync(RESULTS_PAGE, resultsPage(report, result));
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await restoreRedisPersistence().catch((error) => progress(`Redis persistence NOT restored: ${error}`));
    await bench.close();
  }
}

/**
 * `--cells small:1:10,seed004:4:500` keeps only those cells (payload:processes:concurrency), at
 * the sizes of the run: for timing one cell of the full grid without running it all. With
 * `--jobs 40000` every drain of them is that many jobs (up to the grid's most per payload) instead
 * of sized from the system's previous drain: the first seed004 cell of a run otherwise drains a
 * first guess small enough to stay in the server's buffer pool.
 */
function pickCells(size: GridSize, cells: string | undefined, jobs: string | undefined): GridSize {
  if (jobs !== undefined && (cells === undefined || !Number.isInteger(Number(jobs)) || Number(jobs) <= 0))
    throw new Error(`--jobs: "${jobs}" needs --cells and a whole number of jobs above 0`);
  if (cells === undefined) return size;
  const wanted = cells.split(',').map((c) => {
    const [payload, processes, concurrency] = c.split(':');
    if (!PAYLOAD_KINDS.includes(payload as PayloadKind) || !(Number(processes) > 0) || !(Number(concurrency) > 0))
      throw new Error(`--cells: "${c}" is not payload:processes:concurrency (payload ${PAYLOAD_KINDS.join(' or ')})`);
    return { payload: payload as PayloadKind, processes: Number(processes), concurrency: Number(concurrency) };
  });
  return { ...size, cells: wanted, ...(jobs === undefined ? {} : { fixedJobs: Number(jobs) }) };
}

/** `--systems sluice,pgBoss,raw` keeps only those systems of the grid, in the grid's order. */
function pickSystems(systems: readonly GridSystem[], names: string | undefined): GridSystem[] {
  if (names === undefined) return [...systems];
  const wanted = names.split(',');
  const unknown = wanted.filter((n) => !systems.some((s) => s.key === n));
  if (unknown.length > 0)
    throw new Error(`--systems: unknown ${unknown.join(', ')} (known: ${systems.map((s) => s.key).join(', ')})`);
  return systems.filter((s) => wanted.includes(s.key));
}

async function measureBulk(bench: Bench): Promise<BulkEnqueueRow[]> {
  const rows: BulkEnqueueRow[] = [];
  for (const payload of PAYLOAD_KINDS) {
    const { jobs, runs } = BULK[payload];
    progress(`bulk enqueue: ${jobs} ${payload} jobs, ${runs} run(s) per side`);
    const batch = makeJobs(jobs, payload);
    rows.push({ payload, jobs, bytes: payloadBytes(batch), measurement: await measureEnqueue(bench, batch, runs) });
  }
  return rows;
}

function header(bench: Bench, loadAtStart: number): string {
  return [
    `sluice bench  server ${bench.server.version}  max_allowed_packet ${bench.server.maxAllowedPacket}`,
    `              ${redactUrl(bench.url)}  node ${process.version}  ${cpus().length} CPUs  load average at start ${loadAtStart.toFixed(2)}`,
  ].join('\n');
}

/** The committed page: when and how the figures were made, the report as printed, the JSON line. */
function resultsPage(report: string, result: unknown): string {
  return [
    '# sluice benchmark: the last run',
    '',
    `Written by \`npm run bench\` on ${new Date().toISOString()} (${cpus().length} CPUs, node ${process.version}).`,
    'Compare ratios within one run: absolute rates on a shared machine drift by a fifth between runs.',
    '',
    '```text',
    report,
    '```',
    '',
    '```json',
    JSON.stringify(result, null, 2),
    '```',
    '',
  ].join('\n');
}

await main();
