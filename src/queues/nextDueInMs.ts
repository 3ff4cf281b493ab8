import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';
import { HELD_RUN_AT } from '../model/heldRunAt.ts';

/** The most priorities one read looks at; a queue with more is left to polling beyond them. */
const MAX_PRIORITIES = 16;

/**
 * Params: (?queue, ?priority) per priority. Milliseconds from NOW(3) until the earliest run_at
 * among the queue's free jobs (negative: one is due already), or NULL when it holds none. One
 * ix_head seek (queue, lock_id, priority, run_at) per priority, whatever the backlog: a MIN over
 * the whole free range would walk every delayed job, because priority comes before run_at. Held
 * jobs (HELD_RUN_AT) are not due at any time: a release rings the queue's workers instead.
 */
const sqlNextDue = (t: Tables, priorities: number) => `
SELECT TIMESTAMPDIFF(MICROSECOND, NOW(3), MIN(next_run_at)) DIV 1000 AS due_in_ms
FROM (
${Array.from(
  { length: priorities },
  () =>
    `  SELECT MIN(run_at) AS next_run_at FROM ${t.jobs} WHERE queue = ? AND lock_id = '' AND priority = ? AND run_at < '${HELD_RUN_AT}'`,
).join('\n  UNION ALL\n')}
) AS heads`;

/**
 * When the next free job of `queue` falls due, in ms on the database clock (≤ 0: already due), or
 * null when the queue has no free job of these priorities. An idle worker sleeps until then rather
 * than a whole poll period, so a delayed job starts at its runAt.
 */
export async function nextDueInMs(
  db: Executor,
  t: Tables,
  queue: string,
  priorities: readonly number[],
): Promise<number | null> {
  const some = priorities.slice(0, MAX_PRIORITIES);
  if (some.length === 0) return null;
  const [row] = await db.select<{ due_in_ms: number | string | null }>(
    sqlNextDue(t, some.length),
    some.flatMap((p) => [queue, p]),
  );
  return row?.due_in_ms === null || row?.due_in_ms === undefined ? null : Number(row.due_in_ms);
}
