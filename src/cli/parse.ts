import { type ParseArgsConfig, parseArgs } from 'node:util';
import { nearestName } from '../nearestName.ts';
import { UsageError } from './UsageError.ts';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

/** The values of parsed flags: a string for each valued flag given, true for each switch given. */
export type FlagValues<O extends OptionsConfig> = {
  [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string;
};

export interface ParsedArgs<O extends OptionsConfig> {
  readonly values: FlagValues<O & typeof COMMON_OPTIONS>;
  readonly positionals: string[];
}

/** Options every command takes. The URL is better given as MYSQL_URL: a flag shows in `ps`. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  prefix: { type: 'string' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionsConfig;

export const COMMON_HELP = `  --url URL          mysql://user:password@host:port/database (default: MYSQL_URL, then the
                     file MYSQL_URL_FILE names; prefer MYSQL_URL: flags are visible in ps)
  --prefix P         table prefix (default: sluice_)
  --verbose          stack traces on failure (so does DEBUG=1)
  -h, --help         this text`;

/**
 * Strict argv parsing (node:util parseArgs): an unknown flag, a flag without its value, a value
 * given to a switch, or more than `maxPositionals` arguments is a UsageError that names the
 * nearest known flag.
 */
export function parse<O extends OptionsConfig>(argv: readonly string[], options: O, maxPositionals = 0): ParsedArgs<O> {
  const all: OptionsConfig = { ...COMMON_OPTIONS, ...options };
  const args = joinNegativeValues(argv, all);
  let parsed: ParsedArgs<O>;
  try {
    parsed = parseArgs({ args, options: all, strict: true, allowPositionals: true }) as ParsedArgs<O>;
  } catch (error) {
    throw explain(args, all, error as Error);
  }
  if (parsed.values.help !== true && parsed.positionals.length > maxPositionals) {
    const extra = parsed.positionals[maxPositionals] as string;
    throw new UsageError(
      maxPositionals === 0 ? `takes no arguments (got "${extra}")` : `unexpected argument "${extra}"`,
    );
  }
  return parsed;
}

/**
 * `--flag -1` as `--flag=-1`, for a flag that takes a value: parseArgs reads a value starting with
 * a dash as "ambiguous", and the flag's own check should say what it accepts (`--concurrency must
 * be …`) instead.
 */
function joinNegativeValues(argv: readonly string[], options: OptionsConfig): string[] {
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const next = argv[i + 1];
    const name = arg.startsWith('--') ? arg.slice(2) : null;
    if (name !== null && options[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      args.push(`${arg}=${next}`);
      i++;
    } else args.push(arg);
  }
  return args;
}

/** Turns a parseArgs error into one line that names the flag and, for a typo, the nearest known one. */
function explain(argv: readonly string[], options: OptionsConfig, error: Error): UsageError {
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind !== 'option') continue;
    const known = options[token.name];
    if (!known) {
      const flags = Object.keys(options).map((name) => `--${name}`);
      const nearest = nearestName(`--${token.name}`, flags);
      return new UsageError(`unknown flag ${token.rawName}${nearest ? ` (did you mean ${nearest}?)` : ''}`);
    }
    if (known.type === 'string' && token.value === undefined) return new UsageError(`${token.rawName} needs a value`);
    if (known.type === 'boolean' && token.inlineValue) return new UsageError(`${token.rawName} takes no value`);
  }
  return new UsageError(error.message);
}

/** A whole number in [min, max] from a flag, or undefined when absent. */
export function intFlag(
  name: string,
  value: string | boolean | undefined,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `a whole number ≥ ${min}` : `a whole number from ${min} to ${max}`;
    throw new UsageError(`--${name} must be ${range} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** A TCP port (0 picks a free one) from a flag, or undefined when absent. */
export function portFlag(name: string, value: string | boolean | undefined): number | undefined {
  return intFlag(name, value, 0, 65_535);
}

/** A number in [0, 1] from a flag, or undefined when absent. */
export function fractionFlag(name: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--${name} must be a number from 0 to 1 (got ${JSON.stringify(value)})`);
  return n;
}

/** A positive number (fractions allowed) from a flag, or undefined when absent. */
export function positiveFlag(name: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || value.trim() === '' || !Number.isFinite(n) || n <= 0)
    throw new UsageError(`--${name} must be a positive number (got ${JSON.stringify(value)})`);
  return n;
}

/** A comma-separated list from a flag (blanks dropped), or undefined when absent. */
export function listFlag(value: string | undefined): string[] | undefined {
  return value
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** One of `choices` (an action, a sub-command), or a UsageError naming the nearest one. */
export function choice<C extends string>(what: string, value: string | undefined, choices: readonly C[]): C {
  if (value !== undefined && (choices as readonly string[]).includes(value)) return value as C;
  if (value === undefined) throw new UsageError(`needs one of: ${choices.join(', ')}`);
  const nearest = nearestName(value, choices);
  throw new UsageError(
    `unknown ${what} "${value}"${nearest ? ` (did you mean ${nearest}?)` : ''}; expected ${choices.join(', ')}`,
  );
}

/** Prints a command's help text; returns exit code 0. */
export function help(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}
