/** How many differences one comparison reports: enough to read, never a wall. */
const MAX_MISMATCHES = 5;

/**
 * Pure: where `actual` differs from the part of a payload `expected` gives, as readable lines
 * (`payload.to: expected "a@x", got "b@x"`); empty when every key `expected` names is there with an
 * equal value, or when no part is expected (undefined). Objects are compared key by key (keys `expected` does not name are not looked at);
 * arrays and other values as a whole, by their JSON. At most MAX_MISMATCHES lines.
 */
export function payloadMismatches(expected: unknown, actual: unknown, path = 'payload'): string[] {
  const out: string[] = [];
  if (expected === undefined) return out;
  compare(expected, actual, path, out);
  return out;
}

function compare(expected: unknown, actual: unknown, path: string, out: string[]): void {
  if (out.length >= MAX_MISMATCHES) return;
  if (isPlainObject(expected)) {
    if (!isPlainObject(actual)) {
      out.push(`${path}: expected an object, got ${shown(actual)}`);
      return;
    }
    for (const [key, value] of Object.entries(expected)) {
      const at = `${path}.${key}`;
      if (!Object.hasOwn(actual, key)) {
        if (out.length < MAX_MISMATCHES) out.push(`${at}: expected ${shown(value)}, missing`);
      } else compare(value, actual[key], at, out);
    }
    return;
  }
  if (JSON.stringify(expected) !== JSON.stringify(actual))
    out.push(`${path}: expected ${shown(expected)}, got ${shown(actual)}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as one short line of a message: its JSON, cut at 80 characters. */
export function shown(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
