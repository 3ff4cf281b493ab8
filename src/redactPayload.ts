import type { Executor } from './db/executor.ts';
import type { Tables } from './db/tables.ts';
import { valuesTable } from './db/valuesTable.ts';
import { storedPayloadJson } from './model/storedPayload.ts';
import type { PayloadRedactor } from './payloadRedactor.ts';

/** Where finished jobs are copied, and the column that names a job there. */
const COPIES = {
  history: (t: Tables) => ({ table: t.jobHistory, key: 'job_id' }),
  dead: (t: Tables) => ({ table: t.deadJobs, key: 'id' }),
} as const;

/**
 * Params: ?1 ids (list). The copied rows' payloads (apart, by primary key, when the row holds ''),
 * to hand to the hook, and whether each came from apart (payload_apart 1).
 */
const sqlCopied = (table: string, key: string, payloads: string) => `
SELECT c.${key} AS id, c.name, c.queue, COALESCE(p.payload, c.payload) AS payload, p.job_id IS NOT NULL AS payload_apart
FROM ${table} c
LEFT JOIN ${payloads} p ON p.job_id = c.${key} AND c.payload = ''
WHERE c.${key} IN (?)`;

/** Params: ?1 ids (list). Deletes the payloads stored apart of redacted rows: only what the hook kept stays. */
const sqlDeleteApart = (payloads: string) => `
DELETE FROM ${payloads}
WHERE job_id IN (?)`;

/**
 * Params: (id, payload) for each of `count` rows, then ids (list). Stores the redacted payloads,
 * joined in as a derived table: one statement for the batch.
 */
const sqlStoreRedacted = (table: string, key: string, count: number) => `
UPDATE ${table} c
JOIN (${valuesTable(['id', 'payload'], count)}) r ON r.id = c.${key}
SET c.payload = r.payload
WHERE c.${key} IN (?)`;

const FAILED = JSON.stringify({ redacted: 'the redactPayload hook failed; the payload was not kept' });

interface CopiedRow {
  id: number | string;
  name: string;
  queue: string;
  payload: string;
  payload_apart: number | string;
}

/**
 * Inside the transaction that copied `ids` into history or dead jobs: replaces their stored
 * payloads with what `redactor` makes of them (in the row; a payload stored apart is deleted).
 * Does nothing without a redactor (no cost unless configured). Its statements follow the
 * caller's transaction (re-run with it on a conflict).
 */
export async function redactCopied(
  tx: Executor,
  tables: Tables,
  where: keyof typeof COPIES,
  ids: readonly number[],
  redactor: PayloadRedactor | null,
): Promise<void> {
  if (redactor === null || ids.length === 0) return;
  const { table, key } = COPIES[where](tables);
  const rows = await tx.select<CopiedRow>(sqlCopied(table, key, tables.jobPayloads), [ids]);
  if (rows.length === 0) return;
  const values = rows.flatMap((row) => [Number(row.id), redacted(redactor, row)]);
  await tx.write(sqlStoreRedacted(table, key, rows.length), [...values, rows.map((r) => Number(r.id))]);
  await tx.write(sqlDeleteApart(tables.jobPayloads), [rows.map((r) => Number(r.id))]);
}

/** What the hook keeps of one row; a payload refused unread (storedPayloadJson) is kept as a marker saying why, the hook not called. */
function redacted(redactor: PayloadRedactor, row: CopiedRow): string {
  let json: string;
  try {
    json = storedPayloadJson(row.payload, Number(row.payload_apart) === 1 ? 'apart' : 'row');
  } catch (error) {
    return JSON.stringify({ redacted: `${(error as Error).message}; the payload was not kept` });
  }
  try {
    const payload = JSON.parse(json) as unknown;
    const kept = JSON.stringify(redactor({ id: Number(row.id), name: row.name, queue: row.queue, payload }));
    return kept === undefined ? FAILED : kept;
  } catch {
    return FAILED;
  }
}
