import { boundedJson } from './boundedJson.ts';

/** A log line as the statements that write it take it (worker/claims/writeJobLogs.ts). */
export interface JobLogRow {
  readonly jobId: number;
  readonly attempt: number;
  /** 1, 2, … within the attempt; 0 is the row that carries only `dropped`. */
  readonly line: number;
  /** How long ago it was logged, in microseconds: logged_at = NOW(3) less this. */
  readonly ageUs: number;
  readonly message: string;
  /** JSON text, or null. */
  readonly fields: string | null;
  /** Row 0: lines dropped past the caps so far. */
  readonly dropped: number;
}

/** What one write takes from an AttemptLog: its rows, and how far they reach (for written()). */
export interface LogBatch {
  readonly rows: JobLogRow[];
  readonly upTo: number;
  readonly dropped: number;
}

interface Line {
  readonly line: number;
  readonly at: number;
  readonly message: string;
  readonly fields: string | null;
}

/**
 * The lines one attempt of a job logged with ctx.log, kept in memory until written: made on the
 * first ctx.log call (a job that never logs has none), capped at maxLines lines and maxBytes bytes
 * (message and fields as UTF-8) — a line past either cap is counted as dropped, not kept. Writes
 * take a copy (pending) and confirm it (written); a write that fails or matched nothing confirms
 * nothing, so its lines go again with the next one. Two writes may carry the same lines (a
 * heartbeat and the finish): they are keyed by (job, attempt, line), so the second only rewrites them.
 */
export class AttemptLog {
  #lines: Line[] = [];
  #kept = 0;
  #bytes = 0;
  #dropped = 0;
  #droppedWritten = 0;

  constructor(
    readonly jobId: number,
    readonly attempt: number,
    private readonly maxLines: number,
    private readonly maxBytes: number,
  ) {}

  /** Keeps one line, or counts it as dropped. Throws RangeError if `fields` cannot be JSON. */
  add(message: string, fields: unknown): void {
    const encoded = boundedJson(fields, this.maxBytes);
    if ('problem' in encoded) {
      if (encoded.problem.startsWith('is not JSON')) throw new RangeError(`ctx.log: the fields ${encoded.problem}`);
      this.#dropped++;
      return;
    }
    const bytes = Buffer.byteLength(message) + (encoded.json === null ? 0 : Buffer.byteLength(encoded.json));
    if (this.#kept >= this.maxLines || this.#bytes + bytes > this.maxBytes) {
      this.#dropped++;
      return;
    }
    this.#kept++;
    this.#bytes += bytes;
    this.#lines.push({ line: this.#kept, at: performance.now(), message, fields: encoded.json });
  }

  /** Lines logged since the last confirmed write, and the dropped count if it changed; null when nothing is new. */
  pending(): LogBatch | null {
    const changedDrops = this.#dropped > this.#droppedWritten;
    if (this.#lines.length === 0 && !changedDrops) return null;
    const now = performance.now();
    const rows: JobLogRow[] = this.#lines.map((l) => ({
      jobId: this.jobId,
      attempt: this.attempt,
      line: l.line,
      ageUs: Math.max(0, Math.round((now - l.at) * 1000)),
      message: l.message,
      fields: l.fields,
      dropped: 0,
    }));
    if (changedDrops) {
      const { jobId, attempt } = this;
      rows.push({ jobId, attempt, line: 0, ageUs: 0, message: '', fields: null, dropped: this.#dropped });
    }
    return { rows, upTo: this.#lines.at(-1)?.line ?? 0, dropped: this.#dropped };
  }

  /** A write of `batch` committed: its lines need not go again. */
  written(batch: LogBatch): void {
    this.#lines = this.#lines.filter((l) => l.line > batch.upTo);
    this.#droppedWritten = Math.max(this.#droppedWritten, batch.dropped);
  }
}
