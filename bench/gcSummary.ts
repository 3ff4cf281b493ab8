/**
 * `npm run bench -- gc-summary LOG [--jobs N] [--small LOG2 --small-jobs M]`: sums the
 * `--trace-gc-nvp` lines of a bench's children (run it with `BENCH_TRACE_GC=1`, stderr to LOG)
 * per process: scavenges and their pauses, mark-compacts and theirs, and the young generation's
 * bytes allocated, surviving a scavenge, and promoted to the old generation. With `--jobs N` (the
 * jobs the run drained) it divides by N; with a second, small run of the same command (`--small
 * LOG2 --small-jobs M`) it first takes that run's sums away, which leaves the drain without the
 * processes' start-up (loading the sources allocates ~100 MB a process). Prints a table, then one
 * JSON line.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface GcSums {
  scavenges: number;
  scavengePauseMs: number;
  markCompacts: number;
  markCompactPauseMs: number;
  allocatedMB: number;
  survivedMB: number;
  promotedMB: number;
}

const { values: v, positionals } = parseArgs({
  allowPositionals: true,
  options: { jobs: { type: 'string' }, small: { type: 'string' }, 'small-jobs': { type: 'string' } },
});
const [log] = positionals;
if (log === undefined) throw new Error('usage: gcSummary.ts LOG [--jobs N] [--small LOG2 --small-jobs M]');
if ((v.small === undefined) !== (v['small-jobs'] === undefined))
  throw new Error('--small LOG2 and --small-jobs M go together');

const LINE = /^\[(\d+):\S+\]\s+\d+ ms: (.*\bgc=.*)$/;

/** Pure: the sums of each process (by pid) of a log's --trace-gc-nvp lines. */
function sumsByProcess(text: string): Map<string, GcSums> {
  const byPid = new Map<string, GcSums>();
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (match === null) continue;
    const fields = new Map((match[2] as string).split(' ').map((pair) => pair.split('=', 2) as [string, string]));
    const sums = byPid.get(match[1] as string) ?? zero();
    byPid.set(match[1] as string, sums);
    const pause = Number(fields.get('pause') ?? 0);
    if (fields.get('gc') === 's') {
      sums.scavenges += 1;
      sums.scavengePauseMs += pause;
      // Only a scavenge's `allocated` is the young generation's since the last collection.
      sums.allocatedMB += Number(fields.get('allocated') ?? 0) / 1e6;
      sums.survivedMB += Number(fields.get('new_space_survived') ?? 0) / 1e6;
      sums.promotedMB += Number(fields.get('promoted') ?? 0) / 1e6;
    } else {
      sums.markCompacts += 1;
      sums.markCompactPauseMs += pause;
    }
  }
  return byPid;
}

function zero(): GcSums {
  return {
    scavenges: 0,
    scavengePauseMs: 0,
    markCompacts: 0,
    markCompactPauseMs: 0,
    allocatedMB: 0,
    survivedMB: 0,
    promotedMB: 0,
  };
}

function total(byPid: Map<string, GcSums>): GcSums {
  const sums = zero();
  for (const one of byPid.values()) for (const key of Object.keys(sums) as (keyof GcSums)[]) sums[key] += one[key];
  return sums;
}

const KEYS: readonly (keyof GcSums)[] = Object.keys(zero()) as (keyof GcSums)[];
const byPid = sumsByProcess(readFileSync(log, 'utf8'));
if (byPid.size === 0) throw new Error(`${log} has no --trace-gc-nvp lines: run the bench with BENCH_TRACE_GC=1`);
const all = total(byPid);
const small = v.small === undefined ? null : total(sumsByProcess(readFileSync(v.small, 'utf8')));
const jobs = v.jobs === undefined ? null : Number(v.jobs) - Number(v['small-jobs'] ?? 0);
const perJob =
  jobs === null
    ? null
    : (Object.fromEntries(KEYS.map((key) => [key, (all[key] - (small?.[key] ?? 0)) / jobs])) as unknown as GcSums);

const row = (label: string, sums: GcSums, digits = 1) =>
  [label.padEnd(14), ...KEYS.map((key) => sums[key].toFixed(digits).padStart(key.length + 2))].join('');
console.log([''.padEnd(14), ...KEYS.map((key) => `  ${key}`)].join(''));
for (const [pid, sums] of byPid) console.log(row(`pid ${pid}`, sums));
console.log(row('all', all));
if (small !== null) console.log(row('small run', small));
if (perJob !== null) {
  // Per job: pauses in µs, sizes in KB (the same ×1000 on both).
  const scaled = Object.fromEntries(KEYS.map((key) => [key, perJob[key] * 1000])) as unknown as GcSums;
  console.log(row('per job µs/KB', scaled, 2));
}
console.log(JSON.stringify({ processes: byPid.size, all, small, jobs, perJob }));
