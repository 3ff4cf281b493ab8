/**
 * Preload (`node --import tsx --import ./bench/statementCounter.ts …`) that counts the statements
 * a child process sends through mysql2, by first keyword, from mysql2's own diagnostics channel
 * (no patching). At exit it writes `{ "SELECT": n, … }` to `$BENCH_STATEMENTS_DIR/<pid>.json`,
 * so the drain can report round trips per claimed batch for sluice and the raw loop alike,
 * unaffected by anyone else using the server.
 */
import { subscribe } from 'node:diagnostics_channel';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type StatementCounts = Record<string, number>;

const dir = process.env.BENCH_STATEMENTS_DIR;
/** `from,to` in epoch ms: count only statements sent inside this window (the idle-fleet bench's). */
const window = process.env.BENCH_STATEMENTS_WINDOW?.split(',').map(Number);

if (dir) {
  const counts: StatementCounts = {};
  const onStart = (message: unknown) => {
    if (window && !(Date.now() >= (window[0] as number) && Date.now() < (window[1] as number))) return;
    const sql = String((message as { query?: unknown }).query ?? '');
    const kind = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '?';
    counts[kind] = (counts[kind] ?? 0) + 1;
  };
  subscribe('tracing:mysql2:query:start', onStart);
  subscribe('tracing:mysql2:execute:start', onStart);
  process.on('exit', () => writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(counts)));
}

/** Sums the per-process count files the children of one fleet wrote. */
export function sumStatementCounts(files: readonly string[]): StatementCounts {
  const total: StatementCounts = {};
  for (const file of files) {
    for (const [kind, n] of Object.entries(JSON.parse(readFileSync(file, 'utf8')) as StatementCounts))
      total[kind] = (total[kind] ?? 0) + n;
  }
  return total;
}
