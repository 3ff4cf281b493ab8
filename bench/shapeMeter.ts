/**
 * What one operation of the shape bench costs: statements (every statement this process sends
 * through mysql2, by its diagnostics channel, the meter's own readings left out), rows read (the
 * sum of the Handler_read_* counters of the one connection the operation ran on: SHOW SESSION
 * STATUS before and after, on a pool of one, so that nobody else using the server counts), time
 * (wall, from this process) and memory (heap used after a full GC, after minus before; node runs
 * with --expose-gc).
 */
import { subscribe } from 'node:diagnostics_channel';
import type { Knex } from 'knex';

export interface Cost {
  readonly statements: number;
  /** Null where the operation ran on connections the meter cannot read alone. */
  readonly rowsRead: number | null;
  readonly ms: number;
  readonly heapKiB: number;
}

/** Params: none. Returns (Variable_name, Value) of the session's row-read counters. */
const SQL_SESSION_READS = `
SHOW SESSION STATUS
WHERE Variable_name LIKE 'Handler\\_read\\_%'`;

let statements = 0;
const count = (message: unknown) => {
  const sql = String((message as { query?: unknown }).query ?? '');
  if (!sql.includes('SHOW SESSION STATUS')) statements++;
};
subscribe('tracing:mysql2:query:start', count);
subscribe('tracing:mysql2:execute:start', count);

const gc = (globalThis as { gc?: () => void }).gc;

function heapUsed(): number {
  gc?.();
  return process.memoryUsage().heapUsed;
}

/** Handler_read_* summed, on the one connection of `knex` (a pool of one). */
async function sessionReads(knex: Knex): Promise<number> {
  const [rows] = (await knex.raw(SQL_SESSION_READS)) as [{ Variable_name: string; Value: string }[]];
  return rows.reduce((sum, r) => sum + Number(r.Value), 0);
}

/** Runs `fn` once and returns its cost; `session` is the pool of one whose rows it reads, if any. */
export async function measure(session: Knex | null, fn: () => Promise<unknown>): Promise<Cost> {
  const heapBefore = heapUsed();
  const readsBefore = session ? await sessionReads(session) : 0;
  const statementsBefore = statements;
  const started = performance.now();
  await fn();
  const ms = performance.now() - started;
  const sent = statements - statementsBefore;
  const rowsRead = session ? (await sessionReads(session)) - readsBefore : null;
  return { statements: sent, rowsRead, ms, heapKiB: (heapUsed() - heapBefore) / 1024 };
}
