/** Where a value stops being plain JSON data, and what JSON.stringify would make of it there. */
export interface JsonLoss {
  /** The place, from the root's name: `payload.items[3].price`. */
  readonly path: string;
  /** What is there and what JSON does with it: `is NaN, which JSON stores as null`. */
  readonly reason: string;
}

/** Longest path a loss shows; a deeper one keeps its root and its end, with `…` between. */
const MAX_PATH_CHARS = 200;
/** Longest key or symbol description a path or a reason shows before `…`. */
const MAX_KEY_CHARS = 40;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const DATE_TO_JSON = Date.prototype.toJSON;

/**
 * Pure: the first place, in JSON.stringify's order, where JSON would leave out, change or refuse
 * part of `value` — so that what is read back would not be what was given — or null when there is
 * none. `root` names the value in the path (`payload`). Two walks: a quick one (isPlain) passes
 * what is surely plain data, reading each property once and calling no toJSON; anything else is
 * walked again by lossIn, which calls toJSON and getters as JSON.stringify does, to say where.
 *
 * Plain data passes: strings, finite numbers, booleans, null, arrays, and objects whose prototype
 * is Object.prototype or null. A value with a toJSON method (a Date, a Buffer, a class that says
 * how it is stored) passes as what toJSON returns, checked the same way; an invalid Date (toJSON
 * gives null) does not. -0 passes: JSON writes 0, and -0 === 0. A key whose value is undefined
 * passes: JSON leaves it out, and the reader of the key gets undefined either way (refusing it
 * would fail an enqueue in production whenever an optional field happens to be absent).
 * A loss: undefined in an array (null there, as a hole is), a function or a symbol (left out of an
 * object; null in an array), NaN and ±Infinity (null), a BigInt (JSON throws), a Map, a Set or any
 * other object without toJSON whose prototype is not Object's ({} or its own fields: its class is
 * gone), a symbol key (left out), a cycle (JSON throws).
 * Not looked at: non-enumerable properties, and properties of an array besides its elements.
 */
export function jsonLoss(value: unknown, root: string): JsonLoss | null {
  if (isPlain(value, 0)) return null;
  let found: Found | null;
  try {
    found = lossIn(value, '', false, []);
  } catch (error) {
    if (!(error instanceof RangeError && error.message.includes('call stack'))) throw error;
    return { path: root, reason: 'is nested too deeply to check (the call stack ran out)' };
  }
  return found === null ? null : { path: pathOf(root, found.keys), reason: found.reason };
}

/** Objects nested deeper than this are left to lossIn, which finds a cycle a getter could make. */
const PLAIN_DEPTH = 64;

/**
 * True when `value` is surely plain data (strings, finite numbers, booleans, null, valid Dates,
 * arrays and objects of Object.prototype or null without toJSON or symbol keys); false when it may
 * not be, for lossIn to say where. Allocates nothing but each object's (empty) symbol list: a bulk
 * enqueue walks every payload once more with it, so it must cost little beside JSON.stringify.
 */
function isPlain(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      return value === null || (depth < PLAIN_DEPTH && isPlainObject(value, depth + 1));
    default:
      return false;
  }
}

function isPlainObject(v: object, depth: number): boolean {
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto === Array.prototype) {
    if (!Array.isArray(v) || 'toJSON' in v) return false;
    const list = v as unknown[];
    for (let i = 0; i < list.length; i++) if (!isPlain(list[i], depth)) return false;
    return true;
  }
  if (proto === Object.prototype || proto === null) {
    // `in` sees an own toJSON, enumerable or not, and one added to Object.prototype.
    if ('toJSON' in v || Object.getOwnPropertySymbols(v).length !== 0) return false;
    const record = v as Record<string, unknown>;
    for (const k in record) {
      const x = record[k];
      if (x !== undefined && !isPlain(x, depth)) return false;
    }
    return true;
  }
  return proto === Date.prototype && (v as Date).toJSON === DATE_TO_JSON && !Number.isNaN((v as Date).getTime());
}

/** A loss on its way up: keys are pushed innermost first, so they read in reverse. */
interface Found {
  readonly keys: (string | number)[];
  readonly reason: string;
}

/**
 * The loss in `value`, held under `key` (in an array when `inArray`), or null. `ancestors` are the
 * objects being walked above it: meeting one again is a cycle. On plain data it allocates only each
 * object's key lists (its keys, its symbols).
 */
function lossIn(value: unknown, key: string | number, inArray: boolean, ancestors: object[]): Found | null {
  let v = value;
  if ((typeof v === 'object' && v !== null) || typeof v === 'bigint') {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (toJSON === DATE_TO_JSON && v instanceof Date) {
      return Number.isNaN(v.getTime()) ? lost('is an invalid Date, which JSON stores as null') : null;
    }
    if (typeof toJSON === 'function') v = toJSON.call(v, String(key));
  }
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      return Number.isFinite(v) ? null : lost(`is ${v}, which JSON stores as null`);
    case 'object':
      return v === null ? null : lossInObject(v, ancestors);
    case 'bigint':
      return lost('is a BigInt, which JSON cannot store (pass it as a string, or as a number if it fits)');
    default: {
      if (v === undefined && !inArray) return null;
      const what = v === undefined ? 'undefined' : `a ${typeof v}`;
      return lost(
        inArray
          ? `is ${what}${v === undefined ? ' (or a hole)' : ''}, which JSON stores as null`
          : `is ${what}, which JSON leaves out`,
      );
    }
  }
}

function lossInObject(v: object, ancestors: object[]): Found | null {
  if (ancestors.includes(v)) return lost('is an object that contains it (a cycle), which JSON cannot store');
  const proto: unknown = Object.getPrototypeOf(v);
  let found: Found | null = null;
  ancestors.push(v);
  if (proto === Array.prototype) {
    const list = v as unknown[];
    for (let i = 0; i < list.length && found === null; i++) {
      found = lossIn(list[i], i, true, ancestors);
      found?.keys.push(i);
    }
  } else if (proto === Object.prototype || proto === null) {
    const record = v as Record<string, unknown>;
    for (const k of Object.keys(record)) {
      found = lossIn(record[k], k, false, ancestors);
      if (found !== null) {
        found.keys.push(k);
        break;
      }
    }
    const symbol = found === null ? enumerableSymbol(v) : undefined;
    if (symbol !== undefined) {
      found = lost(`has a symbol key (Symbol(${shortText(symbol.description ?? '')})), which JSON leaves out`);
    }
  } else {
    found = lost(classReason(v, proto));
  }
  ancestors.pop();
  return found;
}

/** The first enumerable symbol key of `v`: JSON leaves every symbol key out (a hidden one is no data). */
function enumerableSymbol(v: object): symbol | undefined {
  const symbols = Object.getOwnPropertySymbols(v);
  return symbols.length === 0 ? undefined : symbols.find((s) => Object.prototype.propertyIsEnumerable.call(v, s));
}

/** Why an object of a class without toJSON is not kept, and what to pass instead. */
function classReason(v: object, proto: unknown): string {
  if (v instanceof Map) return 'is a Map, which JSON stores as {} (pass Object.fromEntries(map), or [...map])';
  if (v instanceof Set) return 'is a Set, which JSON stores as {} (pass [...set])';
  if (Array.isArray(v)) return 'is an array of a subclass, which JSON stores as a plain array (pass a plain array)';
  if (v instanceof Number || v instanceof String || v instanceof Boolean)
    return 'is a boxed primitive (new Number, new String, new Boolean), which JSON unboxes (pass the primitive)';
  const name = (proto as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  const what =
    typeof name === 'string' && name !== '' ? `an instance of ${shortText(name)}` : 'an object with its own prototype';
  return `is ${what}, which JSON stores as a plain object of its own fields, or {} (pass plain data, or give its class a toJSON)`;
}

function lost(reason: string): Found {
  return { keys: [], reason };
}

/** `root` and the keys (innermost first) as a path: `.name` for an identifier, `[3]` for an index, `["a b"]` else. */
function pathOf(root: string, keys: readonly (string | number)[]): string {
  let path = '';
  for (let i = keys.length - 1; i >= 0; i--) {
    const key = keys[i] as string | number;
    if (typeof key === 'number') path += `[${key}]`;
    else
      path += IDENTIFIER.test(key) && key.length <= MAX_KEY_CHARS ? `.${key}` : `[${JSON.stringify(shortText(key))}]`;
  }
  if (root.length + path.length <= MAX_PATH_CHARS) return root + path;
  return `${root}…${path.slice(path.length - (MAX_PATH_CHARS - root.length - 1))}`;
}

function shortText(text: string): string {
  return text.length > MAX_KEY_CHARS ? `${text.slice(0, MAX_KEY_CHARS)}…` : text;
}
