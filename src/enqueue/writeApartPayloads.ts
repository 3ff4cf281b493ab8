import { escape as sqlLiteral } from 'mysql2';
import type { Executor, WriteResult } from '../db/executor.ts';
import type { ChunkLimits, ServerChunkLimits } from '../db/planChunks.ts';
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

/** A payload on its way to job_payloads: its escaped literal, and that literal's length in bytes. */
export interface ApartPayload {
  readonly literal: string;
  readonly bytes: number;
}

/**
 * Pure: the escaped literal of a payload stored apart, or JobValidationError when its row
 * would not fit the server's packet limit (checked before anything is written).
 */
export function apartPayload(payload: string, index: number, limits: ServerChunkLimits): ApartPayload {
  const literal = sqlLiteral(payload);
  const bytes = Buffer.byteLength(literal);
  if (bytes + 64 > limits.maxStatementBytes) {
    throw new JobValidationError(
      index,
      'payload',
      `is ${bytes + 64} bytes once escaped for the server, over its max_allowed_packet (${limits.maxStatementBytes} usable)`,
    );
  }
  return { literal, bytes };
}

/**
 * Pure: the INSERTs of job_payloads writing `payloads[i]` for `jobIds[i]`, each within the limits
 * (a payload larger than maxBytes travels alone), with the rows each carries. Each statement is
 * one join of its pieces: no string per row, which for kilobyte payloads cost a copy of every
 * payload and a byte count of each copy.
 */
export function* payloadStatements(
  tables: Tables,
  jobIds: readonly number[],
  payloads: readonly ApartPayload[],
  limits: ChunkLimits,
): Generator<{ sql: string; rows: number }> {
  if (jobIds.length !== payloads.length)
    throw new Error(`${payloads.length} payloads stored apart, but ${jobIds.length} jobs found for them`);
  const prefix = insertPayloadsPrefix(tables);
  let parts = [prefix];
  const prefixBytes = Buffer.byteLength(prefix);
  let bytes = prefixBytes;
  let rows = 0;
  for (const [i, payload] of payloads.entries()) {
    const id = String(jobIds[i]);
    const size = payload.bytes + id.length + 4; // ,( , )
    if (rows > 0 && (bytes + size > limits.maxBytes || rows >= limits.maxRows)) {
      yield { sql: parts.join(''), rows };
      parts = [prefix];
      bytes = prefixBytes;
      rows = 0;
    }
    parts.push(rows === 0 ? '(' : ',(', id, ',', payload.literal, ')');
    bytes += size;
    rows++;
  }
  if (rows > 0) yield { sql: parts.join(''), rows };
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
  const writes = new ApartPayloadWrites(tx, tables, limits);
  await writes.write(jobIds, payloads);
  await writes.settle();
}

/**
 * A batch's payloads stored apart, written with the last statement left in flight: the client
 * validates and escapes the next chunk while the server stores this one. The batch still sends one
 * statement at a time (BatchWriter): settle() before anything else goes on the transaction.
 */
export class ApartPayloadWrites {
  #inFlight: { result: Promise<WriteResult>; rows: number } | null = null;

  constructor(
    private readonly tx: Executor,
    private readonly tables: Tables,
    private readonly limits: ChunkLimits,
  ) {}

  /** Sends the payloads of `jobIds`, every statement but the last awaited. */
  async write(jobIds: readonly number[], payloads: readonly ApartPayload[]): Promise<void> {
    for (const statement of payloadStatements(this.tables, jobIds, payloads, this.limits)) {
      await this.settle();
      const result = this.tx.write(statement.sql);
      result.catch(() => undefined); // observed in settle(); never an unhandled rejection meanwhile
      this.#inFlight = { result, rows: statement.rows };
    }
  }

  /** Waits for the statement in flight and checks that every row of it landed. */
  async settle(): Promise<void> {
    const inFlight = this.#inFlight;
    if (inFlight === null) return;
    this.#inFlight = null;
    const { affectedRows } = await inFlight.result;
    if (affectedRows !== inFlight.rows) throw new Error(`job_payloads took ${affectedRows} of ${inFlight.rows} rows`);
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
