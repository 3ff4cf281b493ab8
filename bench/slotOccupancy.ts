/**
 * `npm run bench -- slots [--concurrency 10,50,200] [--job-ms 2,10] [--jobs 10000]`: how full one
 * worker keeps its slots when each job takes a few milliseconds (a handler that waits on a call),
 * where the grid's jobs take none. For each setting: a backlog of `--jobs` jobs, one in-process
 * worker at the concurrency (other options at their defaults), each handler awaiting a timer of
 * `job-ms`; the drain's rate against what its slots allow (concurrency ÷ the job's time), the
 * mean number of busy slots (`worker.inFlight`, read every 5 ms), and the claims' count and mean
 * size (`job:claimed`). A worker that claims too little ahead shows as slots idle while a backlog
 * waits. The client and the server share the host: at a few ms per job the slots, not the CPU,
 * should bound the drain. Progress goes to stderr; stdout gets the table and, as its last line,
 * the result as JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { defineJob } from 'sluice';
import { type Bench, openBench } from './benchDatabase.ts';
import { progress } from './progress.ts';
import { table } from './report.ts';

const { values: v } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '10,50,200' },
    'job-ms': { type: 'string', default: '2,10' },
    jobs: { type: 'string', default: '10000' },
  },
});
const QUEUE = 'slots';
/** How often the busy slots are read. */
const SAMPLE_MS = 5;
/** What a timer of `ms` takes on Node beyond `ms` (its next turn of the event loop), roughly. */
const TIMER_OVERHEAD_MS = 0.15;

interface SlotRow {
  readonly concurrency: number;
  readonly jobMs: number;
  readonly jobs: number;
  readonly jobsPerSec: number;
  readonly slotsBoundPerSec: number;
  readonly meanBusySlots: number;
  readonly claims: number;
  readonly meanClaim: number;
}

const list = (text: string) => text.split(',').map(Number);
const concurrencies = list(v.concurrency);
const jobMsList = list(v['job-ms']);
const jobs = Number(v.jobs);
if ([...concurrencies, ...jobMsList, jobs].some((n) => !(n >= 0) || !Number.isFinite(n)))
  throw new Error('--concurrency, --job-ms and --jobs take non-negative numbers (lists for the first two)');

const bench = await openBench('sluice_bench_slots');
try {
  const rows: SlotRow[] = [];
  for (const jobMs of jobMsList)
    for (const concurrency of concurrencies) rows.push(await drain(bench, concurrency, jobMs));
  report(rows);
} finally {
  await bench.close();
}

async function drain(b: Bench, concurrency: number, jobMs: number): Promise<SlotRow> {
  let done = 0;
  const timed = defineJob({
    name: 'timed',
    handle: async () => {
      if (jobMs > 0) await sleep(jobMs);
      done++;
    },
  });
  await b.sluice.enqueueBatch(
    Array.from({ length: jobs }, (_, n) => ({ name: 'timed', queue: QUEUE, payload: { n } })),
  );
  const claims: number[] = [];
  const onClaim = (e: { count: number }) => void claims.push(e.count);
  b.sluice.events.on('job:claimed', onClaim);
  const worker = b.sluice.worker({ queues: [QUEUE], concurrency, jobs: [timed], loadPolicy: { enabled: false } });
  const busy: number[] = [];
  const started = performance.now();
  await worker.start();
  const sampler = setInterval(() => busy.push(worker.inFlight), SAMPLE_MS);
  try {
    while (done < jobs) await sleep(SAMPLE_MS);
  } finally {
    clearInterval(sampler);
    await worker.stop();
    b.sluice.events.off('job:claimed', onClaim);
  }
  const seconds = (performance.now() - started) / 1000;
  const row: SlotRow = {
    concurrency,
    jobMs,
    jobs,
    jobsPerSec: jobs / seconds,
    slotsBoundPerSec: jobMs > 0 ? (concurrency / (jobMs + TIMER_OVERHEAD_MS)) * 1000 : Number.POSITIVE_INFINITY,
    meanBusySlots: busy.reduce((a, n) => a + n, 0) / Math.max(1, busy.length),
    claims: claims.length,
    meanClaim: claims.reduce((a, n) => a + n, 0) / Math.max(1, claims.length),
  };
  progress(
    `c${concurrency}, ${jobMs} ms jobs: ${Math.round(row.jobsPerSec)} jobs/s, ${row.meanBusySlots.toFixed(1)} of ${concurrency} slots busy on average`,
  );
  return row;
}

function report(rows: readonly SlotRow[]): void {
  process.stdout.write(
    `Slot occupancy: one worker draining ${jobs} jobs that each wait a timer; slots-bound = concurrency ÷ (job time + ~${TIMER_OVERHEAD_MS} ms)\n\n`,
  );
  process.stdout.write(
    `${table(
      [
        'concurrency',
        'job',
        'jobs/s',
        'slots-bound jobs/s',
        '÷ slots-bound',
        'busy slots (mean)',
        'claims',
        'jobs per claim',
      ],
      rows.map((r) => [
        String(r.concurrency),
        `${r.jobMs} ms`,
        String(Math.round(r.jobsPerSec)),
        Number.isFinite(r.slotsBoundPerSec) ? String(Math.round(r.slotsBoundPerSec)) : '—',
        Number.isFinite(r.slotsBoundPerSec) ? (r.jobsPerSec / r.slotsBoundPerSec).toFixed(2) : '—',
        `${r.meanBusySlots.toFixed(1)} / ${r.concurrency}`,
        String(r.claims),
        r.meanClaim.toFixed(0),
      ]),
    )}\n\n`,
  );
  process.stdout.write(`${JSON.stringify({ slotOccupancy: rows })}\n`);
}
