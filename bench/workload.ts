/**
 * The workload both sides write: `count` no-op jobs on the bench queue with a small JSON payload,
 * priority 0, due now. sluice gets these specs as they are; the raw ceiling turns them into the
 * same column values with the same JSON.stringify.
 */
export const BENCH_QUEUE = 'bench';
export const JOB_NAME = 'noop';

export interface BenchJob {
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  readonly payload: { readonly n: number; readonly email: string; readonly text?: string };
}

export function makeJobs(count: number): BenchJob[] {
  return Array.from({ length: count }, (_, n) => ({
    name: JOB_NAME,
    queue: BENCH_QUEUE,
    priority: 0,
    payload: { n, email: `user${n}@example.com` },
  }));
}

/**
 * As makeJobs, with kilobyte payloads: each carries `text` of 0–16 KiB (spread evenly by a fixed
 * step through the range, mean 8 KiB), the payload mix of seed 004's benchmark.
 */
export function makeKilobyteJobs(count: number): BenchJob[] {
  return withText(makeJobs(count), (n) => (n * 7_919) % 16_384);
}

/** As makeJobs, each payload carrying `text` of `bytes` characters: where inline and apart break even. */
export function makeSizedJobs(count: number, bytes: number): BenchJob[] {
  return withText(makeJobs(count), () => bytes);
}

function withText(jobs: BenchJob[], length: (n: number) => number): BenchJob[] {
  const filler = 'lorem ipsum dolor sit amet, '.repeat(600);
  return jobs.map((job) => ({ ...job, payload: { ...job.payload, text: filler.slice(0, length(job.payload.n)) } }));
}
