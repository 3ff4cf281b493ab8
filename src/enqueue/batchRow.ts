import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/**
 * Params: ?1 completion job (JSON) or NULL, ?2 name or NULL. Returns insertId = the new batch's id;
 * its size is set on close.
 */
const sqlOpenBatch = (t: Tables) => `
INSERT INTO ${t.batches} (size, on_complete, name, created_at)
VALUES (0, ?, ?, NOW(3))`;

/** Params: ?1 size, ?2 batch id. */
const sqlCloseBatch = (t: Tables) => `
UPDATE ${t.batches}
SET size = ?
WHERE id = ?`;

/** Params: ?1 batch id. A batch that received no job (all duplicates) leaves no row. */
const sqlDropBatch = (t: Tables) => `
DELETE FROM ${t.batches}
WHERE id = ?`;

/**
 * Params: ?1 batch id, ?2 the INSERT's insertId, ?3 its rows. Returns the ids that INSERT wrote, in
 * the order of its tuples: ids grow within a statement and across the statements of one transaction,
 * so they are the batch's ids from its first one on (ix_batch), the later chunks not written yet.
 */
const sqlIdsWritten = (t: Tables) => `
SELECT id
FROM ${t.jobs}
WHERE batch_id = ?
  AND id >= ?
ORDER BY id
LIMIT ?`;

/** A batch's row, written in the enqueue's transaction: opened empty, sized on close, or dropped. */
export const batchRow = {
  async open(tx: Executor, tables: Tables, onCompleteJson: string | null, name: string | null): Promise<number> {
    return (await tx.write(sqlOpenBatch(tables), [onCompleteJson, name])).insertId;
  },
  async close(tx: Executor, tables: Tables, batchId: number, size: number): Promise<void> {
    await tx.write(sqlCloseBatch(tables), [size, batchId]);
  },
  async drop(tx: Executor, tables: Tables, batchId: number): Promise<void> {
    await tx.write(sqlDropBatch(tables), [batchId]);
  },
  /** The ids one INSERT of the batch wrote, in the order of its tuples. */
  async idsWritten(tx: Executor, tables: Tables, batchId: number, insertId: number, rows: number): Promise<number[]> {
    const found = await tx.select<{ id: number | string }>(sqlIdsWritten(tables), [batchId, insertId, rows]);
    return found.map((r) => Number(r.id));
  },
};
