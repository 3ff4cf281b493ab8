import { deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * How a payload is stored: its JSON, or — over PACK_FROM_CHARS, when that saves a quarter of it —
 * packed: PACKED_PREFIX and the base64 of its raw deflate. PostgreSQL does the same for any value
 * over 2 KB (TOAST) without being asked; InnoDB keeps what it is given, so a kilobyte payload
 * fills the buffer pool and the disk at its full size, and a drain of more of them than the pool
 * holds waits on disk reads for each claim. JSON shrinks to a third or less (keys and values
 * repeat); what will not shrink by a quarter (already compressed or random data) stays JSON.
 * Packed, a payload may fit the job's row again (src/enqueue/payloadApart.ts decides on the
 * stored length).
 *
 * Every reader of a stored payload goes through storedPayloadJson; text written as JSON before
 * this existed, or by hand, reads as it is. The prefix is never how JSON starts.
 */
export const PACKED_PREFIX = 'deflate:';

/** Below this many characters of JSON a payload is stored as it is: packing it would save little. */
export const PACK_FROM_CHARS = 1024;

/** Packed only when the packed text is at most this share of the JSON's. */
const KEEP_AT_MOST = 0.75;

/** Pure: the text to store for a payload's JSON: the JSON itself, or its packed form when that is a quarter shorter. */
export function packPayload(json: string): string {
  if (json.length <= PACK_FROM_CHARS) return json;
  // Level 1: a third of level 6's CPU for a few percent more bytes, on payloads of kilobytes.
  const packed = PACKED_PREFIX + deflateRawSync(json, { level: 1 }).toString('base64');
  return packed.length <= json.length * KEEP_AT_MOST ? packed : json;
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
