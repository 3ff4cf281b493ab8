import type { Executor } from '../../db/executor.ts';
import type { Tables } from '../../db/tables.ts';
import { withTransaction } from '../../db/transaction.ts';
import { valuesTable } from '../../db/valuesTable.ts';
import { leaveGroups } from '../../groups/leaveGroups.ts';
import { HISTORY_FROM_LIVE, HISTORY_INSERT_COLUMNS } from '../../history/historyColumns.ts';
import { SETTLED_IN_COMPLETION } from '../../model/jobFlags.ts';
import type { PayloadRedactor } from '../../payloadRedactor.ts';
import { redactCopied } from '../../redactPayload.ts';
import { leaveGraph } from '../../workflows/leaveGraph.ts';

/**
 * Params: ?1 lockId, ?2 ids (list). Locks the rows among `ids` this claim still holds whose flags
 * completeJobs' statements left alone, and returns them with their flags and group.
 */
const sqlHeldInGraph = (t: Tables) => `
SELECT id, flags, queue, group_key, batch_id
FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)
  AND (flags & ${SETTLED_IN_COMPLETION}) <> 0
ORDER BY id
FOR UPDATE`;

/**
 * Params: (job id, result JSON) for each of `results` rows, then ?1 ids (list, locked above).
 * Copies them into job_history as completed, with their results (as completeJobs does).
 */
const sqlCopyToHistory = (t: Tables, results: number) => `
INSERT INTO ${t.jobHistory} (${HISTORY_INSERT_COLUMNS})
SELECT ${HISTORY_FROM_LIVE}, 'completed', ${results > 0 ? 'r.result' : 'NULL'}
FROM ${t.jobs} j${results > 0 ? `\nLEFT JOIN (${valuesTable(['id', 'result'], results)}) r ON r.id = j.id` : ''}
WHERE j.id IN (?)
ON DUPLICATE KEY UPDATE retry_times = j.retry_times, last_error = j.last_error, finished_at = NOW(3),
  outcome = 'completed', result = ${results > 0 ? 'r.result' : 'NULL'}`;

/** Params: ?1 ids (list, locked above). Their payloads stored apart: without history nothing refers to them. */
const sqlDeletePayloads = (t: Tables) => `
DELETE p
FROM ${t.jobPayloads} p
JOIN ${t.jobs} j ON j.id = p.job_id AND j.payload = ''
WHERE j.id IN (?)`;

/** Params: ?1 lockId, ?2 ids (list, locked above). Returns affectedRows = ids. */
const sqlDelete = (t: Tables) => `
DELETE FROM ${t.jobs}
WHERE lock_id = ?
  AND id IN (?)`;

/**
 * Completes the jobs of a claim that are part of a workflow, in one short transaction (a savepoint
 * inside completeJobs' own): the rows still held with flags set are locked, copied to the history
 * (with history), deleted (without history, with their payloads stored apart), and their edges settled — children counted down and released, this
 * job's own edges dropped (src/workflows/leaveGraph.ts) — and their group slots passed on or given
 * back (src/groups/leaveGroups.ts). Returns how many it completed and the
 * queues of the children it released. The lock taken first is what makes a late dependent safe:
 * an enqueue that flags this row waits for it, or committed before it and is seen here.
 */
export async function completeInGraph(
  db: Executor,
  tables: Tables,
  lockId: string,
  ids: readonly number[],
  options: {
    readonly history: boolean;
    readonly results?: ReadonlyMap<number, string>;
    readonly redact?: PayloadRedactor | null;
    /** Delete their payloads stored apart too (without history). */
    readonly deletePayloads?: boolean;
  },
): Promise<{ completed: number; payloadsDeleted: number; released: ReadonlyMap<string, number> }> {
  return withTransaction(db, async (tx) => {
    const rows = (
      await tx.select<{
        id: number | string;
        flags: number;
        queue: string;
        group_key: string | null;
        batch_id: number | string | null;
      }>(sqlHeldInGraph(tables), [lockId, ids])
    ).map((r) => ({
      id: Number(r.id),
      flags: Number(r.flags),
      queue: r.queue,
      group_key: r.group_key,
      batch_id: r.batch_id,
    }));
    if (rows.length === 0) return { completed: 0, payloadsDeleted: 0, released: new Map() };
    const held = rows.map((r) => r.id);
    if (options.history) {
      const listed = new Set(held);
      const results = [...(options.results ?? [])].filter(([id]) => listed.has(id));
      await tx.write(sqlCopyToHistory(tables, results.length), [...results.flat(), held]);
      await redactCopied(tx, tables, 'history', held, options.redact ?? null);
    }
    const payloadsDeleted =
      options.deletePayloads && !options.history ? (await tx.write(sqlDeletePayloads(tables), [held])).affectedRows : 0;
    const { affectedRows } = await tx.write(sqlDelete(tables), [lockId, held]);
    if (affectedRows !== held.length) throw new Error(`completed ${affectedRows} of ${held.length} locked jobs`);
    const settled = await leaveGraph(tx, tables, rows, 'completed', options.history);
    const released = new Map(settled.released);
    for (const [queue, n] of await leaveGroups(tx, tables, rows)) released.set(queue, (released.get(queue) ?? 0) + n);
    return { completed: held.length, payloadsDeleted, released };
  });
}
