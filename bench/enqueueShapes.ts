/**
 * `npm run bench -- enqueue --shapes [--rounds 2] [--seconds 4] [--workers 0,2] [--warm 500]`:
 * single-job enqueue (singleEnqueue.ts's producers: each call awaited) in two shapes — 2 processes
 * × 64 callers at once (requests in flight together: sluice's calls share commits, EnqueueCoalescer)
 * and 8 processes × 1 caller — each idle and while 2 consumer processes of its own kind drain the
 * queue. Rows: sluice, sluice with an OpenTelemetry SDK registered in its producers (otelSdk.ts),
 * the raw autocommit INSERT of the same row (one connection per process: its callers' INSERTs
 * queue on it) and BullMQ on Redis with AOF (appendfsync everysec). The systems of a cell take
 * turns, the order flipping each round; each cell reports the median round, with the server's
 * statements and redo flushes (fsyncs) per job for the MySQL systems, and the verdicts: sluice ÷
 * BullMQ AOF, sluice ÷ raw INSERT, and what the SDK costs. Prints the table and one JSON line.
 */
import { parseArgs } from 'node:util';
import { openBench } from './benchDatabase.ts';
import { errorMessage } from './errorMessage.ts';
import { type GridSystem, gridSystems, setUpSystems } from './gridSystems.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { fmt, table } from './report.ts';
import type { ServerCost } from './serverCounters.ts';
import { measureOne, WARM_CALLS } from './singleEnqueue.ts';

const SHAPES = [
  { processes: 2, callers: 64 },
  { processes: 8, callers: 1 },
] as const;

interface Variant {
  readonly label: string;
  readonly system: GridSystem;
  readonly env: NodeJS.ProcessEnv;
}

interface Cell {
  readonly shape: string;
  readonly workers: number;
  readonly variant: string;
  readonly runs: number[];
  readonly jobsPerSec: number;
  readonly statementsPerJob: number | null;
  readonly fsyncsPerJob: number | null;
}

export async function measureEnqueueShapes(argv: readonly string[]): Promise<void> {
  const { values: v } = parseArgs({
    args: [...argv],
    options: {
      shapes: { type: 'boolean' },
      rounds: { type: 'string', default: '2' },
      seconds: { type: 'string', default: '4' },
      workers: { type: 'string', default: '0,2' },
      warm: { type: 'string', default: String(WARM_CALLS) },
    },
  });
  const bench = await openBench();
  const wanted = gridSystems(bench).filter((s) => ['sluice', 'raw', 'bullmqAof'].includes(s.key));
  const { ready } = await setUpSystems(wanted);
  try {
    const [[flush]] = (await bench.conn.query('SELECT @@innodb_flush_log_at_trx_commit AS flush')) as unknown as [
      [{ flush: number }],
    ];
    progress(`innodb_flush_log_at_trx_commit = ${flush?.flush}`);
    const variants: Variant[] = [];
    for (const system of ready) {
      variants.push({ label: system.key, system, env: {} });
      if (system.key === 'sluice') variants.push({ label: 'sluice+sdk', system, env: { BENCH_OTEL: '1' } });
    }
    const cells: Cell[] = [];
    for (const shape of SHAPES) {
      const shapeLabel = `${shape.processes}x${shape.callers}`;
      for (const workers of v.workers.split(',').map(Number)) {
        const runs = new Map<string, { rate: number; cost: ServerCost | null }[]>();
        for (let round = 0; round < Number(v.rounds); round++) {
          const order = round % 2 === 0 ? variants : [...variants].reverse();
          for (const variant of order) {
            const done = runs.get(variant.label) ?? [];
            runs.set(variant.label, done);
            try {
              const { jobsPerSec, cost } = await measureOne(
                bench,
                variant.system,
                workers,
                Number(v.seconds),
                Number(v.warm),
                {
                  ...shape,
                  env: variant.env,
                },
              );
              done.push({ rate: jobsPerSec, cost });
              const perJob = cost
                ? `; ${cost.questions.toFixed(3)} statements, ${cost.redoFlushes.toFixed(3)} ${cost.redoCounter} per job`
                : '';
              progress(
                `${shapeLabel}, ${workers} draining, round ${round + 1}: ${variant.label} ${Math.round(jobsPerSec)} jobs/s${perJob}`,
              );
            } catch (error) {
              progress(
                `${shapeLabel}, ${workers} draining, round ${round + 1}: ${variant.label} failed: ${errorMessage(error)}`,
              );
            }
            await variant.system.peer.clear().catch(() => undefined);
          }
        }
        for (const variant of variants) {
          const done = runs.get(variant.label) ?? [];
          const mid = [...done].sort((a, b) => a.rate - b.rate)[Math.floor((done.length - 1) / 2)];
          cells.push({
            shape: shapeLabel,
            workers,
            variant: variant.label,
            runs: done.map((d) => Math.round(d.rate)),
            jobsPerSec: Math.round(median(done.map((d) => d.rate))),
            statementsPerJob: mid?.cost ? Number(mid.cost.questions.toFixed(3)) : null,
            fsyncsPerJob: mid?.cost ? Number(mid.cost.redoFlushes.toFixed(3)) : null,
          });
        }
      }
    }
    process.stdout.write(`${renderShapes(cells)}\n`);
    process.stdout.write(`${JSON.stringify({ enqueueShapes: cells })}\n`);
  } finally {
    for (const system of ready) await system.peer.teardown().catch(() => undefined);
    await bench.close();
  }
}

function renderShapes(cells: readonly Cell[]): string {
  const rate = (shape: string, workers: number, variant: string) =>
    cells.find((c) => c.shape === shape && c.workers === workers && c.variant === variant)?.jobsPerSec ?? Number.NaN;
  const verdicts: string[] = [];
  for (const { shape, workers } of cells.filter((c) => c.variant === 'sluice')) {
    const sluice = rate(shape, workers, 'sluice');
    verdicts.push(
      `${shape}, ${workers} draining: sluice ÷ BullMQ AOF ${(sluice / rate(shape, workers, 'bullmqAof')).toFixed(2)}, ` +
        `sluice ÷ raw INSERT ${(sluice / rate(shape, workers, 'raw')).toFixed(2)}, ` +
        `SDK costs ${((1 - rate(shape, workers, 'sluice+sdk') / sluice) * 100).toFixed(0)} %`,
    );
  }
  return [
    'single enqueue by shape: processes x callers at once, each call awaited (median round)',
    table(
      ['shape', 'draining', 'system', 'jobs/s', 'statements/job', 'redo flushes/job', 'rounds'],
      cells.map((c) => [
        c.shape,
        String(c.workers),
        c.variant,
        fmt(c.jobsPerSec),
        c.statementsPerJob === null ? '-' : c.statementsPerJob.toFixed(3),
        c.fsyncsPerJob === null ? '-' : c.fsyncsPerJob.toFixed(3),
        c.runs.map(fmt).join(' / '),
      ]),
    ),
    ...verdicts,
  ].join('\n');
}
