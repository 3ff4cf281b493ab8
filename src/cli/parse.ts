import { parseArgs, type ParseArgsConfig } from 'node:util';
import { OptionsError } from '../errors.ts';

/** Options every command takes. */
export const COMMON_OPTIONS = {
  url: { type: 'string' },
  prefix: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const COMMON_HELP = `  --url URL          mysql://user:password@host:port/database (default: MYSQL_URL, then mysql://root@127.0.0.1:3306/test)
  --prefix P         table prefix (default: sluice_)
  -h, --help         this text`;

/** Strict argv parsing: an unknown flag is an error that names it. */
export function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  try {
    return parseArgs({ args: argv, options: { ...COMMON_OPTIONS, ...options }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new OptionsError('argv', (error as Error).message);
  }
}

/** A number in [0, 1] from a flag, or undefined when absent. */
export function fractionFlag(name: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isFinite(n) || n < 0 || n > 1) throw new OptionsError(`--${name}`, `must be a number from 0 to 1 (got ${JSON.stringify(value)})`);
  return n;
}

/** A whole, positive number from a flag, or undefined when absent. */
export function intFlag(name: string, value: string | boolean | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !Number.isInteger(n) || n < 0) throw new OptionsError(`--${name}`, `must be a whole number (got ${JSON.stringify(value)})`);
  return n;
}

/** Prints a command's help text; returns exit code 0. */
export function help(text: string): number {
  process.stdout.write(`${text}\n`);
  return 0;
}
