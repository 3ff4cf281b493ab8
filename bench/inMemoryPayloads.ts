/**
 * The grid's seed004 cells drained again by sluice and the raw loop with a buffer pool that holds
 * their payloads (innodb_buffer_pool_size raised to 1 GiB for these drains, then set back), beside
 * the peers' rates from the grid itself. A seed004 drain of
 * 30,000–40,000 jobs writes 240–320 MB of payloads, more than MariaDB's default pool of 128 MB;
 * InnoDB reads with O_DIRECT, so the drain then waits on the disk for about 0.7 pages per job,
 * while PostgreSQL reads pg-boss's rows through the OS page cache and Redis holds BullMQ's in
 * memory. This section says how much of a seed004 cell is that disk. It changes nothing in the
 * grid: the verdict per cell stays the grid's, at the server's defaults. The pool is set back
 * after the drains, after a failure, and on SIGINT or SIGTERM (onInterrupt.ts).
 */
import type { Bench } from './benchDatabase.ts';
import { type CellResult, type CellRun, cellLabel, drainCell, type GridSize } from './grid.ts';
import type { GridSystem } from './gridSystems.ts';
import { cellVerdict, PEER_NAMES } from './gridVerdict.ts';
import { onInterrupt } from './onInterrupt.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import { makeJobs } from './workload.ts';

const POOL_BYTES = 1024 ** 3;
const RESIZE_WAIT_MS = 60_000;

export interface InMemoryRow {
  readonly cell: CellResult['cell'];
  /** The grid's runs of the cell (the peers' rates, and sluice's and the raw loop's at the default pool). */
  readonly grid: readonly CellRun[];
  /** sluice's and the raw loop's drains of the same jobs with the larger pool. */
  readonly runs: readonly CellRun[];
  readonly poolBytes: number;
}

/** Re-drains the grid's seed004 cells; [] when the pool cannot be resized (said on stderr). */
export async function measureInMemoryPayloads(
  bench: Bench,
  systems: readonly GridSystem[],
  cells: readonly CellResult[],
  size: GridSize,
): Promise<InMemoryRow[]> {
  const chosen = cells.filter((c) => c.cell.payload === 'seed004');
  const redrained = systems.filter((s) => s.key === 'sluice' || s.key === 'raw');
  if (chosen.length === 0 || redrained.length === 0) return [];
  const before = await poolSize(bench);
  if (before >= POOL_BYTES) {
    progress(`in-memory payloads: skipped, the buffer pool is already ${fmt(before / 1024 ** 2)} MiB`);
    return [];
  }
  const setBack = () => resizePool(bench, before);
  const unregister = onInterrupt(setBack);
  try {
    await resizePool(bench, POOL_BYTES);
  } catch (error) {
    unregister();
    progress(`in-memory payloads: skipped, could not resize the buffer pool: ${(error as Error).message}`);
    return [];
  }
  const rows: InMemoryRow[] = [];
  try {
    const jobs = makeJobs(size.maxJobs.seed004, 'seed004');
    for (const result of chosen) {
      const runs: CellRun[] = [];
      for (const system of redrained) {
        const count = result.runs.find((r) => r.system === system.key)?.enqueued ?? jobs.length;
        const window = { targetSeconds: result.targetSeconds, limitSeconds: result.limitSeconds };
        runs.push((await drainCell(bench, system, result.cell, jobs.slice(0, count), size, window)).run);
      }
      rows.push({ cell: result.cell, grid: result.runs, runs, poolBytes: POOL_BYTES });
      progress(`in-memory payloads: ${cellLabel(result.cell)} done`);
    }
  } finally {
    unregister();
    await setBack().catch((error) =>
      progress(`buffer pool NOT set back to ${before} bytes: ${(error as Error).message}`),
    );
  }
  return rows;
}

async function poolSize(bench: Bench): Promise<number> {
  const [rows] = await bench.conn.query('SELECT @@GLOBAL.innodb_buffer_pool_size AS size');
  return Number((rows as { size: number | string }[])[0]?.size);
}

/**
 * Sets the pool's size and waits until the server has resized it: it does so in the background,
 * and the variable changes at once, so the pool's pages say when it is done.
 */
async function resizePool(bench: Bench, bytes: number): Promise<void> {
  await bench.conn.query(`SET GLOBAL innodb_buffer_pool_size = ${Math.round(bytes)}`);
  const deadline = Date.now() + RESIZE_WAIT_MS;
  for (;;) {
    const [status] = await bench.conn.query("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_total'");
    const [page] = await bench.conn.query('SELECT @@innodb_page_size AS size');
    const pages = Number((status as { Value: string }[])[0]?.Value ?? 0);
    const now = pages * Number((page as { size: number | string }[])[0]?.size ?? 0);
    if (Math.abs(now - bytes) < bytes * 0.1) return;
    if (Date.now() > deadline)
      throw new Error(`the pool holds ${now} bytes ${RESIZE_WAIT_MS} ms after asking for ${bytes}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function inMemoryTable(rows: readonly InMemoryRow[]): string {
  if (rows.length === 0) return '';
  const rate = (runs: readonly CellRun[], key: string) => runs.find((r) => r.system === key)?.jobsPerSec ?? null;
  const pages = (runs: readonly CellRun[], key: string) => runs.find((r) => r.system === key)?.cost?.pagesRead;
  const body = rows.map(({ cell, grid, runs }) => {
    const verdict = cellVerdict(grid);
    const best = verdict.bestPeer === null ? null : rate(grid, verdict.bestPeer);
    const sluice = rate(runs, 'sluice');
    return [
      cellLabel(cell),
      show(rate(grid, 'sluice')),
      show(sluice),
      show(rate(grid, 'raw')),
      show(rate(runs, 'raw')),
      best === null || verdict.bestPeer === null ? '—' : `${fmt(best)} ${PEER_NAMES[verdict.bestPeer]}`,
      sluice === null || best === null ? '—' : (sluice / best).toFixed(2),
      `${pages(grid, 'sluice')?.toFixed(2) ?? '—'} → ${pages(runs, 'sluice')?.toFixed(2) ?? '—'}`,
    ];
  });
  return [
    `seed004 with its payloads in memory: sluice and the raw loop drain the same jobs again with innodb_buffer_pool_size ${fmt((rows[0]?.poolBytes ?? 0) / 1024 ** 2)} MiB (then set back); the peers' rates are the grid's; the grid's verdict stays the one at the server's defaults`,
    table(
      [
        'cell',
        'sluice, default pool',
        'sluice, 1 GiB pool',
        'raw, default pool',
        'raw, 1 GiB pool',
        'best peer (grid)',
        'sluice 1 GiB ÷ best peer',
        'sluice pages read per job',
      ],
      body,
    ),
  ].join('\n');
}

function show(rate: number | null): string {
  return rate === null ? '—' : fmt(rate);
}

/** The rows as plain data for the JSON line. */
export function inMemoryResult(rows: readonly InMemoryRow[]) {
  return rows.map(({ cell, runs, poolBytes }) => ({
    payload: cell.payload,
    processes: cell.processes,
    concurrency: cell.concurrency,
    poolBytes,
    jobsPerSec: Object.fromEntries(
      runs.map((r) => [r.system, r.jobsPerSec === null ? null : Math.round(r.jobsPerSec)]),
    ),
    pagesReadPerJob: Object.fromEntries(
      runs.map((r) => [r.system, r.cost ? Math.round(r.cost.pagesRead * 1000) / 1000 : null]),
    ),
  }));
}
