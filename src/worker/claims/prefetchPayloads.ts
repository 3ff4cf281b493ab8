import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { sqlHead } from './claimRandomHead.ts';

/**
 * Params: ?1 queue, ?2 priorities (list), ?3 offset, ?4 rows. Reads the payloads stored apart of a
 * stretch of the queue's head — free, due jobs in claim order (the claim's own head read, sqlHead),
 * `rows` of them from `offset` — and returns only how many it found: what it is for is the reading
 * itself, which leaves their pages in the server's buffer pool for the claims to come. The head is
 * walked in ix_head alone (the derived table covers it); each payload is one primary-key read. The
 * SUM of LENGTH is what makes InnoDB fetch each payload, off-page parts included (a COUNT alone
 * would stop at the index record). A plain consistent read: no lock taken, none waited on.
 */
const sqlReadAhead = (t: Tables) => `
SELECT COUNT(*) AS found, COALESCE(SUM(LENGTH(p.payload)), 0) AS bytes
FROM (${sqlHead(t, true)}) h
JOIN ${t.jobPayloads} p ON p.job_id = h.id`;

/**
 * Reads the payloads of the next `rows` jobs at the queue's head in `slices` statements at once,
 * each on its own connection of `db` (so the server reads their pages in parallel). Resolves to
 * the payloads found.
 */
export async function prefetchPayloads(
  db: Executor,
  tables: Tables,
  head: { queue: string; priorities: readonly number[] },
  rows: number,
  slices: number,
): Promise<number> {
  const size = Math.ceil(rows / slices);
  const sql = sqlReadAhead(tables);
  const offsets = Array.from({ length: slices }, (_, i) => i * size).filter((offset) => offset < rows);
  const found = await Promise.all(
    offsets.map((offset) =>
      db.select<{ found: number | string }>(sql, [head.queue, head.priorities, offset, Math.min(size, rows - offset)]),
    ),
  );
  return found.reduce((sum, [row]) => sum + Number(row?.found ?? 0), 0);
}

/** Pages InnoDB has read from disk since the server started (Innodb_buffer_pool_reads: reads its pool could not serve). */
export async function readDiskReads(db: Executor): Promise<number> {
  const rows = await db.select<{ Value: string }>("SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_reads'");
  return Number(rows[0]?.Value ?? 0);
}
