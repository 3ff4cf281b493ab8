import { OptionsError } from '../errors.ts';
import type { SegmentKey } from './Plan.ts';

/** A key value of a keyset position: a column's value (times as Dates). */
export type KeyValue = string | number | Date;

/**
 * A position in a listing: the index segment it is in (see jobPlans.ts) and the key of the last
 * row read there. Opaque to callers: `encodeCursor` makes the `next` string a page returns.
 */
export interface JobCursor {
  readonly segment: readonly (string | number)[];
  readonly key: readonly KeyValue[];
}

/** Pure: a cursor as a URL-safe string (dates as `{ t: epoch ms }`). */
export function encodeCursor(cursor: JobCursor): string {
  const key = cursor.key.map((v) => (v instanceof Date ? { t: v.getTime() } : v));
  return Buffer.from(JSON.stringify({ s: cursor.segment, k: key })).toString('base64url');
}

/** Pure: the cursor a `next` string names; OptionsError if it is not one of ours. */
export function decodeCursor(text: string, option = 'after'): JobCursor {
  try {
    const raw = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { s: unknown; k: unknown };
    if (!Array.isArray(raw.s) || !Array.isArray(raw.k)) throw new Error('shape');
    const segment = raw.s.map((v) => scalar(v));
    const key = raw.k.map((v) =>
      typeof v === 'object' && v !== null && typeof (v as { t?: unknown }).t === 'number'
        ? new Date((v as { t: number }).t)
        : scalar(v),
    );
    return { segment, key };
  } catch {
    throw notOurs(option, text);
  }
}

/**
 * The cursor, when it names a segment of this walk (`keys`, from Plan#keysOf) with a key of the
 * right shape; else OptionsError: a cursor edited by hand or kept from another listing must not
 * reach the SQL (its values become range bounds).
 */
export function checkCursor(
  cursor: JobCursor,
  keys: readonly SegmentKey[] | null,
  text: string,
  option = 'after',
): JobCursor {
  const fits = (v: KeyValue, key: SegmentKey | undefined) =>
    key?.kind === 'time'
      ? v instanceof Date && Number.isFinite(v.getTime())
      : key?.kind === 'id'
        ? Number.isSafeInteger(v)
        : typeof v === 'string' && v.length <= 255;
  const key = cursor.key;
  if (keys === null || (key.length > 0 && (key.length !== keys.length || !key.every((v, i) => fits(v, keys[i])))))
    throw notOurs(option, text);
  return cursor;
}

function notOurs(option: string, given: unknown): OptionsError {
  const text = String(given);
  const shown = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  return new OptionsError(
    option,
    `is not a cursor of this listing (got ${JSON.stringify(shown)}): pass the \`next\` of the previous page as it came`,
  );
}

function scalar(v: unknown): string | number {
  if (typeof v === 'string' || typeof v === 'number') return v;
  throw new Error('not a scalar');
}
