import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { PayloadRefusedError } from '../errors.ts';
import { MAX_PAYLOAD_BYTES } from '../maxPayloadBytes.ts';

/**
 * How a payload is stored: in its job's row, or apart in job_payloads (keyed by the job's id) with
 * '' in the row; as its JSON, or packed.
 *
 * Apart over PAYLOAD_INLINE_MAX_BYTES: the hot row a claim updates in place stays narrow and a
 * completion copies a few bytes into the history instead of the payload; under it a second
 * table's row costs the enqueue more than the copy saves (docs/how-it-works.md, Payloads).
 *
 * Packed — PACKED_PREFIX and the base64 of its raw deflate — when that brings a payload over the
 * size back into its row: one statement for the enqueue, no second table for the claim, a few
 * hundred bytes in the buffer pool. PostgreSQL compresses any value over 2 KB (TOAST); InnoDB keeps
 * what it is given. A payload that stays apart however it is stored is kept as JSON: packing it
 * halves its bytes but costs the worker more CPU to unpack than its disk reads cost (measured at
 * one process × 50, docs/how-it-works.md, Packed payloads). Not options, like the size.
 */
export const PAYLOAD_INLINE_MAX_BYTES = 1024;

/** What the row holds when its payload is stored apart: '' is never valid JSON, so never a payload. */
const PAYLOAD_APART = '';

/** What a packed payload starts with: never how JSON starts. */
export const PACKED_PREFIX = 'deflate:';

/** Deflated bytes that fit the row once in base64 behind the prefix. */
const PACKED_MAX_BYTES = Math.floor(((PAYLOAD_INLINE_MAX_BYTES - PACKED_PREFIX.length) * 3) / 4);

/**
 * A payload longer than two of these is judged by its start before all of it is deflated (which
 * costs ~70 µs for 8 KB of text): its first PROBE_CHARS, then twice as many, are deflated, and
 * what the second adds, scaled to the whole, says whether it can fit the row (with half again to
 * spare). Text that will not fit is kept as JSON for the cost of 3 KB of deflate, or of 1 KB when
 * its start does not pack at all (PostgreSQL's pglz likewise gives up after 1 KB).
 */
const PROBE_CHARS = 1024;

/** Pure: true when `stored` (the text a row would hold) goes to job_payloads. Its length in UTF-16 units (at most its bytes): no encoding pass. */
export function storedApart(stored: string): boolean {
  return stored.length > PAYLOAD_INLINE_MAX_BYTES;
}

/** Pure: what the job's row holds for a payload stored as `stored`: the text itself, or '' when it goes apart. */
export function rowPayload(stored: string): string {
  return storedApart(stored) ? PAYLOAD_APART : stored;
}

/** Pure: the text to store for a payload's JSON: packed when that fits its row and the JSON does not, else the JSON. */
export function packPayload(json: string): string {
  if (json.length <= PAYLOAD_INLINE_MAX_BYTES) return json;
  if (json.length > 2 * PROBE_CHARS && !mayFitPacked(json)) return json;
  const packed = deflate(json);
  return packed.length <= PACKED_MAX_BYTES ? PACKED_PREFIX + packed.toString('base64') : json;
}

/** Where a stored payload was read from: its job's row, or job_payloads (apart; the row holds ''). */
export type PayloadSource = 'row' | 'apart';

/**
 * A stored payload's JSON text, as the driver returned it (text, or bytes where a claim reads them):
 * unpacked when it is packed. Stored values are untrusted: reads only what sluice could have
 * written, and throws PayloadRefusedError for packed text stored apart or longer than a row holds
 * (sluice writes neither), for text that would be over MAX_PAYLOAD_BYTES (unpacked or not), and
 * for packed text that does not unpack. Not JSON is the caller's to find.
 */
export function storedPayloadJson(stored: string | Buffer, from: PayloadSource): string {
  if (typeof stored === 'string') {
    if (!stored.startsWith(PACKED_PREFIX)) return withinBound(stored);
    refuseUnwritten(stored.length, from);
    return unpack(stored.slice(PACKED_PREFIX.length));
  }
  if (!isPacked(stored)) {
    if (stored.length > MAX_PAYLOAD_BYTES) throw tooLong(stored.length);
    return stored.toString('utf8');
  }
  refuseUnwritten(stored.length, from);
  return unpack(stored.toString('latin1', PACKED_PREFIX.length));
}

/** What a reader that shows a stored payload gets: the payload parsed (text that is not JSON as it is), or why it was refused. */
export type ShownPayload =
  | { readonly payload: unknown; readonly refused: null }
  | { readonly payload: null; readonly refused: string };

/** As storedPayloadJson, for a reader that shows what is stored (jobs.get, the dead-job list): never throws. */
export function shownPayload(stored: string, from: PayloadSource): ShownPayload {
  let json: string;
  try {
    json = storedPayloadJson(stored, from);
  } catch (error) {
    return { payload: null, refused: (error as Error).message };
  }
  try {
    return { payload: JSON.parse(json) as unknown, refused: null };
  } catch {
    return { payload: json, refused: null };
  }
}

/** Throws PayloadRefusedError unless packed text of `length` characters read from `from` is what sluice writes. */
function refuseUnwritten(length: number, from: PayloadSource): void {
  if (from === 'apart')
    throw new PayloadRefusedError('packed text stored apart (sluice keeps packed payloads in their row)');
  if (length > PAYLOAD_INLINE_MAX_BYTES)
    throw new PayloadRefusedError(
      `packed text of ${length} characters (sluice packs into at most ${PAYLOAD_INLINE_MAX_BYTES})`,
    );
}

/** `json` when it is at most MAX_PAYLOAD_BYTES as UTF-8 (counted only when it could be over). */
function withinBound(json: string): string {
  if (json.length * 3 <= MAX_PAYLOAD_BYTES) return json;
  const bytes = Buffer.byteLength(json, 'utf8');
  if (bytes > MAX_PAYLOAD_BYTES) throw tooLong(bytes);
  return json;
}

function tooLong(bytes: number): PayloadRefusedError {
  return new PayloadRefusedError(`${bytes} bytes of JSON, over the ${MAX_PAYLOAD_BYTES} any payload may have`);
}

/** Pure: false when the start of `json` says that, deflated, it will not fit the row (PROBE_CHARS). */
function mayFitPacked(json: string): boolean {
  const first = deflate(json.slice(0, PROBE_CHARS)).length;
  if (first > PACKED_MAX_BYTES) return false;
  const second = deflate(json.slice(0, 2 * PROBE_CHARS)).length;
  return second + (second - first) * (json.length / PROBE_CHARS - 2) <= 1.5 * PACKED_MAX_BYTES;
}

/** Level 1: a third of level 6's CPU, a few percent more bytes. */
function deflate(text: string): Buffer {
  return deflateRawSync(text, { level: 1 });
}

const PREFIX_BYTES = Buffer.from(PACKED_PREFIX, 'latin1');

function isPacked(stored: Buffer): boolean {
  return stored.length >= PREFIX_BYTES.length && PREFIX_BYTES.equals(stored.subarray(0, PREFIX_BYTES.length));
}

function unpack(base64: string): string {
  let json: Buffer;
  try {
    json = inflateRawSync(Buffer.from(base64, 'base64'), { maxOutputLength: MAX_PAYLOAD_BYTES });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new PayloadRefusedError(`packed text unpacks past the ${MAX_PAYLOAD_BYTES} bytes any payload may have`);
    throw new PayloadRefusedError(`packed text does not unpack (${(error as Error).message})`);
  }
  return json.toString('utf8');
}
