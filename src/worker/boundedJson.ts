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
 */
export function boundedJson(value: unknown, maxBytes: number): { json: string | null } | { problem: string } {
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
    return { problem: `is not JSON-serialisable: ${(error as Error).message}` };
  }
  if (json === undefined) return { problem: `is not JSON-serialisable (a ${typeof value})` };
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) return { problem: `is ${bytes} bytes as JSON, over the limit of ${maxBytes}` };
  return { json };
}

/** The largest progress value a handler may report, as JSON. */
export const MAX_PROGRESS_BYTES = 4_096;
