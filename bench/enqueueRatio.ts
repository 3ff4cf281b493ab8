/**
 * `npm run bench -- ratio [--rounds 3] [--seconds 4] [--workers 0,2] [--warm 500]`: the single-job enqueue
 * section of `npm run bench` alone (singleEnqueue.ts: ENQUEUERS producer processes, each awaiting
 * one `sluice.enqueue` per job), sluice against the raw autocommit INSERT of the same row, the two
 * interleaved round by round (the order flips every round) so that both see the same host. Prints
 * each run with the server's statements and redo flushes per job, the ratio sluice ÷ raw per round
 * and their median. `--warm N`: each producer makes up to N calls (at most 5 s of them) before the
 * window, as the full bench's WARM_CALLS do by default; 0 puts a producer's first calls, run before
 * V8 has compiled them, in its few seconds.
 * Runs in its own database (BENCH_DATABASE, which the npm script sets to sluice_bench_ratio unless
 * given), so it does not drop a full `npm run bench`'s.
 */
import { parseArgs } from 'node:util';
import { openBench } from './benchDatabase.ts';
import { gridSystems, setUpSystems } from './gridSystems.ts';
import { median } from './median.ts';
import { progress } from './progress.ts';
import { ENQUEUERS, measureOne, WARM_CALLS } from './singleEnqueue.ts';

const { values: v } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    workers: { type: 'string', default: '0' },
    warm: { type: 'string', default: String(WARM_CALLS) },
  },
});
// Each producer's calls before the window (peerEnqueueChild.ts), through measureOne.
const warmCalls = Number(v.warm);

async function main(): Promise<void> {
  const bench = await openBench();
  const wanted = gridSystems(bench).filter((s) => s.key === 'sluice' || s.key === 'raw');
  const { ready } = await setUpSystems(wanted);
  try {
    if (ready.length !== 2) throw new Error('sluice and the raw INSERT must both be set up');
    for (const workers of v.workers.split(',').map(Number)) {
      const ratios: number[] = [];
      for (let round = 0; round < Number(v.rounds); round++) {
        const order = round % 2 === 0 ? ready : [...ready].reverse();
        const rates = new Map<string, number>();
        for (const system of order) {
          const { jobsPerSec, cost, cpu } = await measureOne(bench, system, workers, Number(v.seconds), warmCalls);
          rates.set(system.key, jobsPerSec);
          const perJob =
            `; per job: ${Math.round(cpu?.clientUs ?? 0)} µs client CPU, ${Math.round(cpu?.serverUs ?? 0)} µs server CPU` +
            (cost ? `, ${cost.questions.toFixed(3)} statements, ${cost.redoFlushes.toFixed(3)} redo flushes` : '');
          progress(
            `round ${round + 1} ${system.key} ×${ENQUEUERS}, ${workers} draining: ${Math.round(jobsPerSec)} jobs/s${perJob}`,
          );
          await system.peer.clear().catch(() => undefined);
        }
        const ratio = (rates.get('sluice') ?? 0) / (rates.get('raw') ?? 1);
        ratios.push(ratio);
        progress(`round ${round + 1}, ${workers} draining: sluice ÷ raw = ${ratio.toFixed(2)}`);
      }
      const line = `${workers} draining: sluice ÷ raw per round ${ratios.map((r) => r.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(2)}`;
      process.stdout.write(`${line}\n`);
    }
  } finally {
    for (const system of ready) await system.peer.teardown().catch(() => undefined);
    await bench.close();
  }
}

await main();
