import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { SingleBar } from 'cli-progress';
import { JobValidationError, SluiceError } from '../errors.ts';
import type { JobSpec } from '../model/job.ts';
import { SLUICE_DEFAULTS } from '../options.ts';
import type { Sluice } from '../Sluice.ts';
import { boundedLines, LineTooLongError } from './boundedLines.ts';
import { jobFromLine, NdjsonLineError } from './ndjsonJob.ts';
import { openSluice } from './openSluice.ts';
import { COMMON_HELP, help, intFlag, parse } from './parse.ts';
import { UsageError } from './UsageError.ts';

/** The longest NDJSON line read: a job's payload (maxPayloadBytes as JSON) and room for its other fields. */
const MAX_LINE_BYTES = SLUICE_DEFAULTS.maxPayloadBytes + 64 * 1024;

export const ENQUEUE_HELP = `sluice enqueue FILE|-: enqueue jobs from NDJSON (one job object per line; - reads stdin)

  --atomic          the whole file is one all-or-nothing batch (one transaction)
  --batch-size N    lines per batch (per chunk with --atomic) (default: 1000)
  --queue Q         queue for lines that name none
Each line is a job object: {"name":"send-email","payload":{…},"queue":"mail","runAt":"2026-11-24T09:30:00Z"}
(runAt: an ISO-8601 time with its zone, or epoch milliseconds). A UTF-8 byte-order mark is skipped.
A workflow: lines carry "ref" and "parents" (refs of other lines, or live job ids; an edge may be
{"job":"ref","continueOnFailure":true}) as enqueueBatch takes them. A ref names a job of its own
batch: with --atomic a FILE that names refs is read whole and checked as one graph (stdin is not).
A bad line is reported with its line number; nothing of its batch (with --atomic: of the file)
is written, and the command exits 1. Progress goes to stderr: a bar on a terminal, lines otherwise.
${COMMON_HELP}`;

/** A chunk of jobs with the line number of each. */
interface Chunk {
  readonly jobs: JobSpec[];
  readonly lines: number[];
}

export async function enqueueCommand(argv: string[]): Promise<number> {
  const { values: v, positionals } = parse(
    argv,
    {
      atomic: { type: 'boolean' },
      'batch-size': { type: 'string' },
      queue: { type: 'string' },
    },
    1,
  );
  if (v.help) return help(ENQUEUE_HELP);
  const source = positionals[0];
  if (!source) throw new UsageError('needs a file of NDJSON jobs, or - for stdin');
  const batchSize = intFlag('batch-size', v['batch-size'], 1) ?? 1000;
  const totalBytes = source === '-' ? null : (await stat(source)).size;
  const input = source === '-' ? process.stdin : createReadStream(source);
  const sluice = await openSluice(v, { poolMax: 2, logLevel: process.env.LOG_LEVEL ?? 'warn' });
  if (v.atomic === true && source !== '-' && (await namesGraph(source))) {
    try {
      return await enqueueGraphFile(sluice, source, v.queue);
    } finally {
      await sluice.close();
    }
  }
  const progress = new Progress(totalBytes, process.stderr.isTTY ? await import('cli-progress') : null);
  const started = performance.now();
  // The chunk being written: a validation error's index (counted from the first job) maps to its line.
  let inFlight: Chunk = { jobs: [], lines: [] };
  let inFlightBase = 0;
  async function* chunks(): AsyncGenerator<JobSpec[]> {
    let pending: Chunk = { jobs: [], lines: [] };
    let before = 0;
    let lineNo = 0;
    const emit = () => {
      inFlight = pending;
      inFlightBase = before;
      before += pending.jobs.length;
      pending = { jobs: [], lines: [] };
      return inFlight.jobs;
    };
    for await (const text of boundedLines(input, MAX_LINE_BYTES)) {
      lineNo++;
      progress.bytes += Buffer.byteLength(text) + 1;
      if (text.trim() === '' || text === '\uFEFF') continue;
      let job: JobSpec;
      try {
        job = jobFromLine(text, lineNo, v.queue);
      } catch (error) {
        if (error instanceof NdjsonLineError) throw new LineError(lineNo, error.message);
        throw error;
      }
      pending.jobs.push(job);
      pending.lines.push(lineNo);
      if (pending.jobs.length >= batchSize) yield emit();
    }
    if (pending.jobs.length > 0) yield emit();
  }
  try {
    const result = await sluice.enqueueStream(chunks(), {
      atomic: v.atomic === true,
      onChunk: (p) => progress.update(p.count),
    });
    progress.stop();
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `${JSON.stringify({
        received: result.received,
        enqueued: result.count,
        skipped: result.skipped,
        batches: result.batchIds.length,
        atomic: v.atomic === true,
        seconds: Number(seconds.toFixed(2)),
        jobsPerSec: Math.round(result.count / seconds),
        peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      })}\n`,
    );
    return 0;
  } catch (error) {
    progress.stop();
    const where =
      error instanceof LineError || error instanceof LineTooLongError
        ? error.line
        : error instanceof JobValidationError && error.index >= 0
          ? (inFlight.lines[error.index - inFlightBase] ?? null)
          : null;
    const reason =
      error instanceof JobValidationError
        ? `${error.field} ${error.reason}${v.atomic || !/unknown ref/.test(error.reason) ? '' : CROSS_BATCH_HINT}`
        : error instanceof SluiceError || error instanceof LineError || error instanceof LineTooLongError
          ? error.message
          : (error as Error).message;
    // A line that does not parse is read after every chunk handed out so far was written.
    const committed =
      error instanceof LineError || error instanceof LineTooLongError
        ? inFlightBase + inFlight.jobs.length
        : inFlightBase;
    const kept = v.atomic
      ? 'nothing was written'
      : `nothing of its batch was written; the ${committed} job(s) before it were committed`;
    process.stderr.write(`sluice enqueue: ${where === null ? '' : `line ${where}: `}${reason} (${kept})\n`);
    return 1;
  } finally {
    await sluice.close();
  }
}

/** Said when a chunk's job names a ref it does not hold: refs are local to a batch. */
const CROSS_BATCH_HINT =
  ' (a ref names a job of the same batch, and each --batch-size lines are a batch: use --atomic)';

/** Whether a file names a graph: a line with a "ref" or "parents" key (a text scan up to the first, before any job is read). */
async function namesGraph(path: string): Promise<boolean> {
  try {
    for await (const text of boundedLines(createReadStream(path), MAX_LINE_BYTES))
      if (GRAPH_KEY.test(text)) return true;
  } catch (error) {
    if (error instanceof LineTooLongError) return false; // the streaming read reports it, with its line
    throw error;
  }
  return false;
}
const GRAPH_KEY = /"(?:ref|parents)"\s*:/;

/**
 * --atomic on a file that names refs: a graph is checked whole before anything is written, so the
 * file is read into memory and enqueued with enqueueBatch, in one transaction. Prints the same
 * summary; a bad line or job is reported with its line number and nothing is written.
 */
async function enqueueGraphFile(sluice: Sluice, path: string, queue: string | undefined): Promise<number> {
  const started = performance.now();
  const jobs: JobSpec[] = [];
  const lines: number[] = [];
  let lineNo = 0;
  try {
    for await (const text of boundedLines(createReadStream(path), MAX_LINE_BYTES)) {
      lineNo++;
      if (text.trim() === '' || text === '\uFEFF') continue;
      try {
        jobs.push(jobFromLine(text, lineNo, queue));
      } catch (error) {
        if (error instanceof NdjsonLineError) throw new LineError(lineNo, error.message);
        throw error;
      }
      lines.push(lineNo);
    }
    const result = await sluice.enqueueBatch(jobs);
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(
      `${JSON.stringify({
        received: jobs.length,
        enqueued: result.count,
        skipped: result.skipped,
        batches: result.batchId === null ? 0 : 1,
        atomic: true,
        seconds: Number(seconds.toFixed(2)),
        jobsPerSec: Math.round(result.count / seconds),
        peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      })}\n`,
    );
    return 0;
  } catch (error) {
    const where =
      error instanceof LineError || error instanceof LineTooLongError
        ? error.line
        : error instanceof JobValidationError && error.index >= 0
          ? (lines[error.index] ?? null)
          : null;
    const reason = error instanceof JobValidationError ? `${error.field} ${error.reason}` : (error as Error).message;
    process.stderr.write(`sluice enqueue: ${where === null ? '' : `line ${where}: `}${reason} (nothing was written)\n`);
    return 1;
  }
}

class LineError extends Error {
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(reason);
  }
}

/** A bar on a terminal (by bytes when the size is known), a line every 2 s otherwise, on stderr. */
class Progress {
  bytes = 0;
  readonly #bar: SingleBar | null;
  #lastLine = 0;
  readonly #started = performance.now();

  constructor(
    private readonly totalBytes: number | null,
    bars: typeof import('cli-progress') | null,
  ) {
    this.#bar = bars
      ? new bars.SingleBar({
          format:
            totalBytes === null
              ? ' {value} jobs | {rate} jobs/s'
              : ' [{bar}] {percentage}% | {jobs} jobs | {rate} jobs/s',
          stream: process.stderr,
          hideCursor: true,
        })
      : null;
    this.#bar?.start(totalBytes ?? 0, 0, { jobs: 0, rate: 0 });
  }

  update(jobs: number): void {
    const rate = Math.round(jobs / ((performance.now() - this.#started) / 1000));
    if (this.#bar) {
      this.#bar.update(this.totalBytes === null ? jobs : this.bytes, { jobs, rate });
      return;
    }
    if (performance.now() - this.#lastLine < 2000) return;
    this.#lastLine = performance.now();
    const share = this.totalBytes ? ` (${Math.round((100 * this.bytes) / this.totalBytes)}%)` : '';
    process.stderr.write(`enqueued ${jobs} jobs${share}, ${rate} jobs/s\n`);
  }

  stop(): void {
    this.#bar?.stop();
  }
}
