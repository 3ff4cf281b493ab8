/**
 * Pure: a value as JSON text, piece by piece, without recursion — so that a value nested 100,000
 * deep (JSON.parse reads it; JSON.stringify overflows the stack) can be written out, and so that
 * a caller can stop after as many bytes as it wants to send (JSON.stringify(v, null, 2) of a deep
 * value is quadratic: each level indents all below it). With `maxDepth`, a container below that
 * depth is written as `[…]` or `{…}` (no longer JSON: for reading). Values as JSON.stringify
 * writes them (toJSON, undefined and functions left out of objects, null in arrays), except
 * that a BigInt is written as its digits and a reference to an enclosing container as
 * "[Circular]": a masking hook may return anything.
 */
export function* jsonPieces(value: unknown, options: { indent?: number; maxDepth?: number } = {}): Generator<string> {
  const indent = options.indent ?? 0;
  const maxDepth = options.maxDepth ?? Number.POSITIVE_INFINITY;
  const newline = (depth: number) => (indent > 0 ? `\n${' '.repeat(indent * depth)}` : '');
  const colon = indent > 0 ? ': ' : ':';
  const open = new Set<object>();
  const stack: Frame[] = [];
  let pending: unknown = value;
  for (;;) {
    const depth = stack.length;
    const scalar = scalarText(pending);
    if (scalar !== null) yield scalar;
    else if (open.has(pending as object)) yield '"[Circular]"';
    else {
      const entries = entriesOf(pending as object);
      const array = Array.isArray(pending);
      if (entries.length === 0) yield array ? '[]' : '{}';
      else if (depth >= maxDepth) yield array ? '[…]' : '{…}';
      else {
        yield array ? '[' : '{';
        open.add(pending as object);
        stack.push({ container: pending as object, array, entries, next: 0 });
      }
    }
    // Close every finished container, then open the next entry of the innermost open one.
    for (;;) {
      const frame = stack[stack.length - 1];
      if (!frame) return;
      if (frame.next < frame.entries.length) {
        const [key, v] = frame.entries[frame.next] as [string, unknown];
        yield `${frame.next > 0 ? ',' : ''}${newline(stack.length)}${frame.array ? '' : `${JSON.stringify(key)}${colon}`}`;
        frame.next++;
        pending = v;
        break;
      }
      stack.pop();
      open.delete(frame.container);
      yield `${newline(stack.length)}${frame.array ? ']' : '}'}`;
    }
  }
}

interface Frame {
  readonly container: object;
  readonly array: boolean;
  readonly entries: readonly [string, unknown][];
  next: number;
}

/** The JSON of a value that is not a container, or null for one that is. */
function scalarText(value: unknown): string | null {
  if (value === null || value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    const json = (value as { toJSON: () => unknown }).toJSON();
    return json !== null && typeof json === 'object' ? JSON.stringify(String(json)) : scalarText(json);
  }
  return null;
}

/** A container's entries as JSON keeps them: an array's all (holes as null), an object's defined ones. */
function entriesOf(container: object): [string, unknown][] {
  if (Array.isArray(container)) return Array.from(container, (v, i) => [String(i), v]);
  return Object.entries(container).filter(
    ([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol',
  );
}

/**
 * Pure: at most `maxBytes` UTF-8 bytes of a value's pretty JSON (indent 2, containers below
 * `maxDepth` elided), and whether anything was left out. The work is bounded by `maxBytes`,
 * whatever the value's size or depth.
 */
export function boundedPrettyJson(value: unknown, maxBytes: number, maxDepth: number): { text: string; cut: boolean } {
  let text = '';
  let bytes = 0;
  let cut = false;
  for (const piece of jsonPieces(value, { indent: 2, maxDepth })) {
    const size = Buffer.byteLength(piece);
    if (bytes + size > maxBytes) {
      text += Buffer.from(piece)
        .subarray(0, maxBytes - bytes)
        .toString('utf8')
        .replace(/\uFFFD$/, '');
      cut = true;
      break;
    }
    text += piece;
    bytes += size;
    if (piece === '[…]' || piece === '{…}') cut = true;
  }
  return { text, cut };
}
