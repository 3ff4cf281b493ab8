/**
 * How anything a handler throws becomes an Error, and how an error becomes bounded text for a
 * job's last_error, an event or a log line. Nothing here may throw: a handler can throw
 * `Object.create(null)`, an object whose toString throws, or an Error whose stack getter throws,
 * and the failure path must still record the job's failure.
 */

/** The most characters of an error's text kept in last_error or a log line. */
export const MAX_ERROR_CHARS = 8_000;

/** An Error for anything thrown, with a readable message; an Error whose fields throw is copied into a plain one. */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) {
    try {
      void thrown.message;
      void thrown.stack;
      void thrown.name;
      return thrown;
    } catch {
      const copy = new Error(
        `handler threw an Error whose fields cannot be read (${safeString(() => thrown.constructor?.name)})`,
      );
      const code = safeString(() => (thrown as { code?: unknown }).code);
      if (code) Object.assign(copy, { code });
      return copy;
    }
  }
  return new Error(`handler threw a non-Error: ${describeThrown(thrown)}`);
}

/** `name: message` (and code), then the stack, cut to `maxChars`; never throws. */
export function errorText(error: unknown, maxChars = MAX_ERROR_CHARS): string {
  const e = coerceError(error);
  const stack = safeString(() => e.stack);
  const head = safeString(() => `${e.name}: ${e.message}`);
  const code = safeString(() => (e as { code?: unknown }).code);
  const text = stack?.includes(safeString(() => e.message)) ? stack : `${head}${stack ? `\n${stack}` : ''}`;
  return cut(code ? `[${code}] ${text}` : text, maxChars);
}

/** The fields of an error a log line carries: type, message, code and stack, each bounded; never the object itself. */
export function errorFields(
  error: unknown,
  maxChars = MAX_ERROR_CHARS,
): { type: string; message: string; code?: string; stack?: string } {
  const e = coerceError(error);
  const code = safeString(() => (e as { code?: unknown }).code);
  const stack = safeString(() => e.stack);
  return {
    type: safeString(() => e.name) || 'Error',
    message: cut(
      safeString(() => e.message),
      Math.min(maxChars, 2_000),
    ),
    ...(code ? { code: cut(code, 100) } : {}),
    ...(stack ? { stack: cut(stack, maxChars) } : {}),
  };
}

function describeThrown(value: unknown): string {
  if (value === null || value === undefined || typeof value !== 'object')
    return cut(
      safeString(() => String(value)),
      500,
    );
  const json = safeString(() => JSON.stringify(value));
  return cut(json || safeString(() => Object.prototype.toString.call(value)), 500);
}

function safeString(read: () => unknown): string {
  try {
    const value = read();
    if (value === undefined || value === null) return '';
    return typeof value === 'string' ? value : String(value);
  } catch {
    return '';
  }
}

function cut(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}… (${text.length - maxChars} more characters)` : text;
}
