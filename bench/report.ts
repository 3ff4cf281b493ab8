/**
 * What the benches' reports share: a plain-text table, rates as whole jobs/s with thousands
 * separators, and the statements a drain's workers sent per 50 jobs.
 */
import type { DrainMeasurement } from './drain.ts';

/** Statements per 50 jobs processed (start-up included; a cut-off drain counts what it did). */
export function statementsPer50(m: DrainMeasurement): number {
  const total = Object.values(m.statements).reduce((a, b) => a + b, 0);
  return (total * 50) / (m.startedEarly + m.jobs);
}

export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `    ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')}`;
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
