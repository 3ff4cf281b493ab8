import { escape as sqlLiteral } from 'mysql2';
import type { Executor } from '../db/executor.ts';
import { planCountedChunks, type ServerChunkLimits } from '../db/planChunks.ts';
import type { Tables } from '../db/tables.ts';
import { JobValidationError } from '../errors.ts';

/**
 * Params: none (values rendered inline by mysql2's escaping, as the jobs' own INSERT). Writes
 * (job id, payload) rows into job_payloads. Returns affectedRows = rows written.
 */
const insertPayloadsPrefix = (t: Tables) => `INSERT INTO ${t.jobPayloads} (job_id, payload) VALUES `;

/**
 * Params: ?1 first id of one INSERT of a batch's jobs, ?2 batch id, ?3 rows. Returns the ids of
 * that INSERT's jobs whose payload is stored apart, in the INSERT's order: one statement's
 * auto-increment ids rise in the order of its rows (whatever the lock mode or the increment a
 * Galera node uses), the batch's earlier INSERTs have smaller ids and its next one is not sent yet.
 * A primary-key range read from the INSERT's first id; rows of other batches in it are skipped.
 */
const sqlApartIds = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE id >= ?
  AND batch_id = ?
  AND payload = ''
ORDER BY id
LIMIT ?`;

/** A payload on its way to job_payloads: its escaped literal, and the index of its job in the call (for errors). */
export interface ApartPayload {
  readonly literal: string;
  readonly index: number;
}

/**
 * Pure: the escaped literal of a payload stored apart, or JobValidationError when its row
 * would not fit the server's packet limit (checked before anything is written).
 */
export function apartPayload(payload: string, index: number, limits: ServerChunkLimits): ApartPayload {
  const literal = sqlLiteral(payload);
  const bytes = Buffer.byteLength(literal) + 64;
  if (bytes > limits.maxStatementBytes) {
    throw new JobValidationError(
      index,
      'payload',
      `is ${bytes} bytes once escaped for the server, over its max_allowed_packet (${limits.maxStatementBytes} usable)`,
    );
  }
  return { literal, index };
}

/**
 * Inside the enqueue's transaction, right after the INSERT of the jobs: writes their payloads
 * stored apart, `payloads[i]` for `jobIds[i]`, in statements within the packet limit. Its
 * statements follow the caller's transaction (re-run with it on a conflict).
 */
export async function writeApartPayloads(
  tx: Executor,
  tables: Tables,
  jobIds: readonly number[],
  payloads: readonly ApartPayload[],
  limits: ServerChunkLimits,
): Promise<void> {
  if (jobIds.length !== payloads.length)
    throw new Error(`${payloads.length} payloads stored apart, but ${jobIds.length} jobs found for them`);
  const tuples = payloads.map((p, i) => `(${jobIds[i]},${p.literal})`);
  for (const chunk of planCountedChunks(insertPayloadsPrefix(tables), tuples, limits)) {
    const { affectedRows } = await tx.write(chunk.sql);
    if (affectedRows !== chunk.rows) throw new Error(`job_payloads took ${affectedRows} of ${chunk.rows} rows`);
  }
}

/** The ids of one INSERT's jobs whose payloads are stored apart (sqlApartIds), in its order. */
export async function apartIdsOf(
  tx: Executor,
  tables: Tables,
  batchId: number,
  firstId: number,
  count: number,
): Promise<number[]> {
  const rows = await tx.select<{ id: number | string }>(sqlApartIds(tables), [firstId, batchId, count]);
  return rows.map((r) => Number(r.id));
}
