/**
 * Pure: a value a handler hands back (its result, its progress) as JSON text of at most
 * `maxBytes` UTF-8 bytes, or why it cannot be kept. `undefined` (a handler that returns nothing)
 * is no value at all: `{ json: null }`.
 */
export function boundedJson(value: unknown, maxBytes: number): { json: string | null } | { problem: string } {
  if (value === undefined) return { json: null };
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return { problem: `is not JSON-serialisable: ${(error as Error).message}` };
  }
  if (json === undefined) return { problem: `is not JSON-serialisable (a ${typeof value})` };
  const bytes = Buffer.byteLength(json);
  if (bytes > maxBytes) return { problem: `is ${bytes} bytes as JSON, over the limit of ${maxBytes}` };
  return { json };
}

/** The largest progress value a handler may report, as JSON. */
export const MAX_PROGRESS_BYTES = 4_096;
