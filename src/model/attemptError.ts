import { coerceError } from '../errorText.ts';

/** One failed attempt of a job, as kept in job_errors (`keptAttempts` of them) and shown by `sluice.jobs.get`. */
export interface AttemptError {
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When it failed, on the DB clock (for a claim the maintenance process took back: when it did). */
  readonly failedAt: Date;
  /** The registry id of the worker that ran it; null when nobody knows (a claim of a worker with no registry row). */
  readonly workerId: string | null;
  /** The error's message, at most ERROR_MESSAGE_BYTES. */
  readonly message: string;
  /** The error's `code` (a string or number on the thrown value), at most ERROR_CODE_BYTES; null when it had none. */
  readonly code: string | null;
  /** Its stack, at most ERROR_STACK_BYTES; null when it had none. */
  readonly stack: string | null;
}

/** The most UTF-8 bytes kept of each part of an attempt's error. */
export const ERROR_MESSAGE_BYTES = 2_048;
export const ERROR_CODE_BYTES = 64;
export const ERROR_STACK_BYTES = 8_192;

/** The parts of an error an attempt keeps, cut to their byte limits. */
export type AttemptErrorFields = Pick<AttemptError, 'message' | 'code' | 'stack'>;

/** Pure, never throws: message, code and stack of anything a handler threw, each cut to its byte limit. */
export function attemptErrorFields(thrown: unknown): AttemptErrorFields {
  const error = coerceError(thrown);
  const code = read(() => (error as { code?: unknown }).code);
  const stack = read(() => error.stack);
  return {
    message: cutUtf8(read(() => error.message) ?? '', ERROR_MESSAGE_BYTES),
    code: code === null || code === '' ? null : cutUtf8(code, ERROR_CODE_BYTES, ''),
    stack: stack === null ? null : cutUtf8(stack, ERROR_STACK_BYTES),
  };
}

/**
 * Pure: `text` in at most `maxBytes` UTF-8 bytes, cut at a character boundary, ending in `mark`
 * when cut (the mark counts towards the limit).
 */
export function cutUtf8(text: string, maxBytes: number, mark = '…'): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const room = Math.max(0, maxBytes - Buffer.byteLength(mark));
  const bytes = Buffer.from(text);
  let end = room;
  // Step back over continuation bytes (10xxxxxx) to the start of the character that does not fit.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString() + mark;
}

function read(get: () => unknown): string | null {
  try {
    const value = get();
    if (value === undefined || value === null) return null;
    if (typeof value === 'string') return value;
    return typeof value === 'number' || typeof value === 'bigint' ? String(value) : null;
  } catch {
    return null;
  }
}
