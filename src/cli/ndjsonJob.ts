import type { JobSpec } from '../model/job.ts';

/** An ISO-8601 date, or date-time with a zone (Z or ±hh:mm): a time without a zone would be read as local time. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;
const BYTE_ORDER_MARK = '\uFEFF';

/** A line of an NDJSON file that is not a job; its message names the reason (the caller adds the line number). */
export class NdjsonLineError extends Error {}

/**
 * Pure: one NDJSON line → a JobSpec for enqueue. JSON has no dates, so `runAt` may be an ISO-8601
 * string (`2026-11-24T09:30:00Z`; a date-time needs its zone) or epoch milliseconds; the first
 * line may start with a UTF-8 byte-order mark. `queue` fills in lines that name none. The job
 * itself is validated by enqueue (JobValidationError), not here.
 */
export function jobFromLine(text: string, lineNo: number, queue?: string): JobSpec {
  const line = lineNo === 1 && text.startsWith(BYTE_ORDER_MARK) ? text.slice(1) : text;
  let job: unknown;
  try {
    job = JSON.parse(line);
  } catch (error) {
    throw new NdjsonLineError(`not valid JSON: ${(error as Error).message}`);
  }
  if (typeof job !== 'object' || job === null || Array.isArray(job))
    throw new NdjsonLineError('is not a JSON object (one job object per line)');
  const spec = { ...(job as Record<string, unknown>) };
  if (queue !== undefined && !('queue' in spec)) spec.queue = queue;
  if ('runAt' in spec) spec.runAt = runAtOf(spec.runAt);
  return spec as unknown as JobSpec;
}

function runAtOf(value: unknown): Date {
  const time =
    typeof value === 'number' && Number.isFinite(value)
      ? value
      : typeof value === 'string' && ISO_8601.test(value.trim())
        ? Date.parse(value.trim())
        : Number.NaN;
  if (Number.isNaN(time))
    throw new NdjsonLineError(
      `runAt must be an ISO-8601 time with its zone (2026-11-24T09:30:00Z) or epoch milliseconds (got ${JSON.stringify(value)})`,
    );
  return new Date(time);
}
