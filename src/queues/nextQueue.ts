import type { Executor } from '../db/executor.ts';
import type { Tables } from '../db/tables.ts';

/** Params: ?1 lower bound (exclusive). The next queue name of the live table: one ix_head seek. */
const sqlNextQueue = (t: Tables) => `
SELECT MIN(queue) AS queue
FROM ${t.jobs}
WHERE queue > ?`;

/** Params: none. The first queue name of the live table: one ix_head seek. */
const sqlFirstQueue = (t: Tables) => `
SELECT MIN(queue) AS queue
FROM ${t.jobs}`;

/** The next queue name of the live table after `after` (the first when null), or null: one index seek. */
export async function nextQueue(db: Executor, t: Tables, after: string | null): Promise<string | null> {
  const [row] = await db.select<{ queue: string | null }>(
    after === null ? sqlFirstQueue(t) : sqlNextQueue(t),
    after === null ? [] : [after],
  );
  return row?.queue ?? null;
}
