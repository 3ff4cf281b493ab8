/** Throws the JobValidationError of one field of the job being validated. */
export type Fail = (field: string, reason: string) => never;

/** A value as a validation error shows it: its type, and a short form of it. */
export function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return `${typeof value} ${String(value)}`;
  if (value instanceof Date) return `Date ${Number.isNaN(value.getTime()) ? 'Invalid' : value.toISOString()}`;
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
