import { deflateRawSync, inflateRawSync } from 'node:zlib';

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

/**
 * A stored payload's JSON text, as the driver returned it (text, or bytes where a claim reads them):
 * unpacked when it is packed. Throws when packed text does not unpack (not JSON is the caller's to find).
 */
export function storedPayloadJson(stored: string | Buffer): string {
  if (typeof stored === 'string') {
    return stored.startsWith(PACKED_PREFIX) ? unpack(stored.slice(PACKED_PREFIX.length)) : stored;
  }
  return isPacked(stored) ? unpack(stored.toString('latin1', PACKED_PREFIX.length)) : stored.toString('utf8');
}

/** As storedPayloadJson, for a reader that shows what is stored: text that does not unpack comes back as it is. */
export function storedPayloadOrAsIs(stored: string): string {
  try {
    return storedPayloadJson(stored);
  } catch {
    return stored;
  }
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
  try {
    return inflateRawSync(Buffer.from(base64, 'base64')).toString('utf8');
  } catch (error) {
    throw new Error(`packed payload does not unpack (${(error as Error).message})`);
  }
}
