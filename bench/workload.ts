/**
 * The workload every side writes: `count` no-op jobs on the bench queue, priority 0, due now, with
 * one of two payloads:
 *   - 'small': `{ n, email }`, about 40 bytes of JSON (the ~100 B row of a tiny job);
 *   - 'seed004': the same plus a `pad` string that brings each payload's JSON to a size drawn
 *     uniformly from 0–16 KB (mean ~8 KB), the payload mix of the high-load queue write-up the
 *     design follows. The sizes come from a fixed seed, so every run and every system gets the
 *     same sequence.
 *   - 'records': an application's payload, `{ n, email, items }` with `items` order lines (`id`,
 *     `sku`, `name`, `price`, `qty`, `inStock`) of seeded random values, as many as bring its JSON to
 *     seed004's size for the same job (mean ~8 KB). Deflated it shrinks ~2.5x, so ~90 % of them
 *     stay over a row's 1 KiB however stored: sluice writes them apart, as JSON.
 * sluice gets these specs as they are; the raw ceiling and the peers turn them into the same
 * JSON with JSON.stringify.
 */
export const BENCH_QUEUE = 'bench';
export const JOB_NAME = 'noop';

export type PayloadKind = 'small' | 'seed004' | 'records';
export const PAYLOAD_KINDS: readonly PayloadKind[] = ['small', 'seed004', 'records'];

/** Largest JSON payload of the seed-004 mix, in bytes. */
export const SEED004_MAX_BYTES = 16 * 1024;
const SEED = 4;

export interface BenchJob {
  readonly name: string;
  readonly queue: string;
  readonly priority: number;
  readonly payload: {
    readonly n: number;
    readonly email: string;
    readonly pad?: string;
    readonly text?: string;
    readonly items?: readonly OrderLine[];
  };
}

/** One line of a 'records' payload. */
export interface OrderLine {
  readonly id: number;
  readonly sku: string;
  readonly name: string;
  readonly price: number;
  readonly qty: number;
  readonly inStock: boolean;
}

/** Characters of each payload's JSON, counted once as it is made (peers size their statements by it). */
const payloadChars = new WeakMap<BenchJob['payload'], number>();

/** The length of a job's payload JSON: what a peer budgets a statement or a call by. */
export function payloadLength(job: BenchJob): number {
  let chars = payloadChars.get(job.payload);
  if (chars === undefined) {
    chars = JSON.stringify(job.payload).length;
    payloadChars.set(job.payload, chars);
  }
  return chars;
}

export function makeJobs(count: number, kind: PayloadKind = 'small'): BenchJob[] {
  const size = kind === 'small' ? null : seededSizes(SEED);
  return Array.from({ length: count }, (_, n) => {
    const payload = { n, email: `user${n}@example.com` };
    if (!size) return { name: JOB_NAME, queue: BENCH_QUEUE, priority: 0, payload };
    if (kind === 'records')
      return { name: JOB_NAME, queue: BENCH_QUEUE, priority: 0, payload: withLines(payload, size()) };
    // `,"pad":""` adds 10 bytes to the small payload's JSON; the pad fills the rest.
    const padLength = Math.max(0, size() - JSON.stringify(payload).length - 10);
    return { name: JOB_NAME, queue: BENCH_QUEUE, priority: 0, payload: { ...payload, pad: SEED004_PAD(padLength, n) } };
  });
}

/** Words the 'records' names and SKUs are made of: drawn once from a fixed seed. */
const RECORD_WORDS = (() => {
  const next = mulberry32(SEED + 1);
  const letters = (count: number) =>
    Array.from({ length: count }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join('');
  return Array.from({ length: 2048 }, () => letters(3 + Math.floor(next() * 7)));
})();

/** `payload` with order lines drawn from the job's own seed until its JSON reaches `size` characters. */
function withLines(payload: { n: number; email: string }, size: number): BenchJob['payload'] {
  const pick = mulberry32(payload.n + 1);
  const word = () => RECORD_WORDS[Math.floor(pick() * RECORD_WORDS.length)] as string;
  const items: OrderLine[] = [];
  // `,"items":[]` adds 11 characters; each line its JSON and a comma.
  let length = JSON.stringify(payload).length + 11;
  while (length < size) {
    const line = {
      id: 100_000 + Math.floor(pick() * 900_000),
      sku: `${word().toUpperCase()}-${Math.floor(pick() * 10_000)}`,
      name: `${word()} ${word()} ${word()}`,
      price: Math.round(pick() * 100_000) / 100,
      qty: 1 + Math.floor(pick() * 20),
      inStock: pick() < 0.8,
    };
    items.push(line);
    length += JSON.stringify(line).length + (items.length > 1 ? 1 : 0);
  }
  const withItems = { ...payload, items };
  payloadChars.set(withItems, length);
  return withItems;
}

/**
 * What fills a seed004 pad, by BENCH_SEED004_PAD: 'repeat' (the default) one character, which
 * sluice stores packed in ~100 bytes and PostgreSQL in as few (TOAST); 'words' words drawn from a
 * vocabulary of 512, as text and JSON repeat themselves (packed, stored at about half); 'random'
 * printable characters, which no store can pack. The same sizes whatever the fill.
 */
const SEED004_PAD = padFill(process.env.BENCH_SEED004_PAD ?? 'repeat');

function padFill(kind: string): (length: number, n: number) => string {
  if (kind === 'repeat') return (length) => 'x'.repeat(length);
  if (kind === 'words') {
    const next = mulberry32(SEED);
    const letters = (count: number) =>
      Array.from({ length: count }, () => String.fromCharCode(97 + Math.floor(next() * 26))).join('');
    const words = Array.from({ length: 512 }, () => letters(3 + Math.floor(next() * 7)));
    return (length, n) => {
      const pick = mulberry32(n + 1);
      let text = '';
      while (text.length < length) text += `${words[Math.floor(pick() * words.length)]} `;
      return text.slice(0, length);
    };
  }
  if (kind === 'random') {
    // '#' (35) to '~' (126): no '"', and '\\' (92) becomes '!': nothing JSON escapes.
    return (length, n) => {
      const pick = mulberry32(n + 1);
      return Array.from({ length }, () => {
        const code = 35 + Math.floor(pick() * 92);
        return String.fromCharCode(code === 92 ? 33 : code);
      }).join('');
    };
  }
  throw new Error(`BENCH_SEED004_PAD is '${kind}': one of repeat, words, random`);
}

/** JSON bytes of a payload list: min, mean and max, for the report. */
export function payloadBytes(jobs: readonly BenchJob[]): { min: number; mean: number; max: number } {
  const sizes = jobs.map(payloadLength);
  const total = sizes.reduce((a, b) => a + b, 0);
  return { min: Math.min(...sizes), mean: Math.round(total / Math.max(1, sizes.length)), max: Math.max(...sizes) };
}

/** Sizes uniform in 0–SEED004_MAX_BYTES from mulberry32(seed): the same sequence on every run. */
function seededSizes(seed: number): () => number {
  const next = mulberry32(seed);
  return () => Math.floor(next() * (SEED004_MAX_BYTES + 1));
}

/** Numbers uniform in [0, 1) from a seed: the same sequence on every run. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
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
