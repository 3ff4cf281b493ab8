import { jsonLoss } from '../model/jsonLoss.ts';

/** Thrown by the size guard of boundedJson once the JSON is surely over its limit. */
class OverLimit {
  constructor(readonly atLeast: number) {}
}

/**
 * Pure: a value a handler hands back (its result, its progress) as JSON text of at most
 * `maxBytes` UTF-8 bytes, or why it cannot be kept. `undefined` (a handler that returns nothing)
 * is no value at all: `{ json: null }`. While JSON.stringify walks the value, a replacer adds up
 * a lower bound of the text it writes (each key kept, each string's length; every value at least
 * one byte) and stops the walk as soon as that passes `maxBytes`: a 200 MB return value costs about
 * the limit's worth of work, not 200 MB of text.
 *
 * With `exactAs` (the value's name in a path: 'result'), a value JSON would store changed is a
 * problem too, named at its path (jsonLoss): a result or a progress value is kept as given or not
 * at all. Without it (a log line's fields) JSON's conversions stand: an Error logs as {}.
 */
export function boundedJson(
  value: unknown,
  maxBytes: number,
  exactAs?: string,
): { json: string | null } | { problem: string } {
  if (value === undefined) return { json: null };
  let atLeast = 0;
  const guard = function (this: unknown, key: string, v: unknown) {
    const inArray = Array.isArray(this);
    // An object leaves out an undefined, function or symbol value, key and all.
    const omitted = !inArray && (v === undefined || typeof v === 'function' || typeof v === 'symbol');
    if (!omitted) atLeast += (inArray ? 0 : key.length) + (typeof v === 'string' ? v.length + 2 : 1);
    if (atLeast > maxBytes) throw new OverLimit(atLeast);
    return v;
  };
  let json: string | undefined;
  try {
    json = JSON.stringify(value, guard);
  } catch (error) {
    if (error instanceof OverLimit)
      return { problem: `is at least ${error.atLeast} bytes as JSON, over the limit of ${maxBytes}` };
    const loss = exactAs === undefined ? null : lossOrNull(value, exactAs);
    if (loss !== null) return { problem: `is not JSON-serialisable: ${loss}` };
    return { problem: `is not JSON-serialisable: ${(error as Error).message}` };
  }
  if (json === undefined) return { problem: `is not JSON-serialisable (a ${typeof value})` };
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) return { problem: `is ${bytes} bytes as JSON, over the limit of ${maxBytes}` };
  const loss = exactAs === undefined ? null : jsonLoss(value, exactAs);
  if (loss !== null) return { problem: `is not plain JSON: ${loss.path} ${loss.reason}` };
  return { json };
}

/** Where JSON.stringify threw (a BigInt, a cycle), as text, or null if the walk throws as well. */
function lossOrNull(value: unknown, root: string): string | null {
  try {
    const loss = jsonLoss(value, root);
    return loss === null ? null : `${loss.path} ${loss.reason}`;
  } catch {
    return null;
  }
}

/** The largest progress value a handler may report, as JSON. */
export const MAX_PROGRESS_BYTES = 4_096;
